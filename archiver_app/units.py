"""Sizes, durations and shares as people read them, the same in the CLI and the app."""

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


def share_text(share: float) -> str:
    """A share of lines or pixels: a change too small to show at one decimal is ``<0.1%``,
    never ``0.0%``, which reads as no change at all."""
    if share <= 0:
        return "0%"
    return "<0.1%" if share < 0.001 else f"{share:.1%}"


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


def upper_first(text: str) -> str:
    """``text`` with its first letter a capital and the rest as it is: not
    ``str.capitalize``, which lowercases the rest ("mirroring to Blue drive" became
    "Mirroring to blue drive")."""
    return text[:1].upper() + text[1:]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its noun, singular for one: "1 file", "2 files", "1,204 copies"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
