"""Outcomes are values: every code has words for people, and the words never carry the code."""

from __future__ import annotations

import errno

import pytest

from archiver_app.mirror import copier
from archiver_app.mirror.outcomes import (
    CopyResult,
    Shortfall,
    Stop,
    StopReason,
    describe_end,
    short_message,
)


@pytest.mark.parametrize("code", [*StopReason, *CopyResult, *Shortfall], ids=str)
def test_every_code_has_a_message(code: StopReason | CopyResult | Shortfall) -> None:
    assert code.message and code.message[0].islower()


def test_stop_messages_name_the_cause_and_keep_the_detail() -> None:
    assert Stop(StopReason.READ_ONLY).message == "the drive is read-only"
    full = Stop(StopReason.FULL, "No space left on device")
    assert full.message == "the drive is full (No space left on device)" == str(full)
    assert describe_end(StopReason.GONE).startswith("destination gone: the drive is gone")
    assert describe_end(CopyResult.SOURCE_UNREADABLE) == "source unreadable"
    assert "read-only" in short_message(StopReason.READ_ONLY)
    assert short_message(Shortfall.NO_ROOM) == (
        "no room left on the mounted drives (past what each keeps in reserve: 1% of the"
        " drive, at most 64 MiB)"
    )


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOSPC, StopReason.FULL),
        (errno.EROFS, StopReason.READ_ONLY),
        (errno.EACCES, StopReason.PERMISSION),
        (errno.ENODEV, StopReason.GONE),
        (errno.EINVAL, StopReason.IO_ERROR),
    ],
)
def test_the_copier_classifies_into_stop_reasons(code: int, reason: StopReason) -> None:
    err = copier.classify(OSError(code, "system words"))
    assert err.kind is reason and str(err) == "system words"
