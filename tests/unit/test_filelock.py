"""Advisory lock files: one holder at a time, nothing left behind once released."""

from __future__ import annotations

import os
from pathlib import Path

from archiver_app.filelock import held_or_busy


def test_one_holder_at_a_time_and_no_file_left(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "work.lock"
    with held_or_busy(lock) as first:
        assert first and lock.exists()
        with held_or_busy(lock) as second:  # another open of the file: busy, not waiting
            assert not second
        assert lock.exists()  # the busy attempt did not remove the holder's file
    assert not lock.exists()
    with held_or_busy(lock) as again:
        assert again


def test_a_file_left_by_a_holder_that_died_is_taken(tmp_path: Path) -> None:
    lock = tmp_path / "work.lock"
    lock.write_bytes(b"")  # a holder killed before it could remove its file holds nothing
    os.utime(lock, (0, 0))
    with held_or_busy(lock) as mine:
        assert mine
    assert not lock.exists()
