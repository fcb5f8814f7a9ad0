"""Compare captures of a page over time: text, look and resources, and a change summary.

- :mod:`~archiver_app.compare.text`: line diff of normalised page texts with ignore patterns;
- :mod:`~archiver_app.compare.visual`: pixel diff of screenshots, changed regions boxed;
- :mod:`~archiver_app.compare.snapshots`: two captures of the library compared, honestly.
"""

from archiver_app.compare.snapshots import (
    ChangeSummary,
    Comparison,
    ResourceDiff,
    compare_captures,
    find_capture,
)
from archiver_app.compare.text import TextDiff, compile_ignore_patterns, diff_texts, unified
from archiver_app.compare.visual import Box, VisualDiff, diff_images, overlay

__all__ = [
    "Box",
    "ChangeSummary",
    "Comparison",
    "ResourceDiff",
    "TextDiff",
    "VisualDiff",
    "compare_captures",
    "compile_ignore_patterns",
    "diff_images",
    "diff_texts",
    "find_capture",
    "overlay",
    "unified",
]
