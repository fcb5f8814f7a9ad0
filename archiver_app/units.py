"""Sizes and durations as people read them, the same in the CLI and the app (decimal units)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def human_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def capture_times(times: Sequence[datetime], minute: str = "%Y-%m-%d %H:%M") -> list[str]:
    """``times`` formatted to the minute, each one to the second where another of the list
    falls in the same minute (a watched page captured twice in a minute stays two entries
    a reader can tell apart)."""
    labels = [f"{t:{minute}}" for t in times]
    shared = {label for label in labels if labels.count(label) > 1}
    return [
        f"{t:{minute}:%S}" if label in shared else label
        for t, label in zip(times, labels, strict=True)
    ]
