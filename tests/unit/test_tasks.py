"""The progress throttle and the cancel token."""

from __future__ import annotations

import pytest

from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate, ThrottledProgress


def test_throttle_forwards_first_and_final_only_within_interval() -> None:
    now = [0.0]
    seen: list[int] = []
    throttle = ThrottledProgress(lambda u: seen.append(u.done), interval=0.1, clock=lambda: now[0])
    for i in range(1, 101):
        now[0] += 0.001
        throttle(ProgressUpdate(done=i, total=100))
    assert seen == [1, 100]
    assert throttle.latest() == ProgressUpdate(done=100, total=100, at=throttle.latest().at)  # type: ignore[union-attr]


def test_throttle_forwards_again_after_interval() -> None:
    now = [0.0]
    seen: list[int] = []
    throttle = ThrottledProgress(lambda u: seen.append(u.done), interval=0.1, clock=lambda: now[0])
    for i in range(1, 6):
        now[0] += 0.06
        throttle(ProgressUpdate(done=i))
    assert seen == [1, 3, 5]


def test_fraction() -> None:
    assert ProgressUpdate(done=1, total=4).fraction == 0.25
    assert ProgressUpdate(done=0, bytes_done=5, bytes_total=10).fraction == 0.5
    assert ProgressUpdate(done=3).fraction is None


def test_cancel_token() -> None:
    token = CancelToken()
    token.raise_if_cancelled()
    token.cancel()
    assert token.cancelled
    assert token.wait(5) is True
    with pytest.raises(Cancelled):
        token.raise_if_cancelled()
