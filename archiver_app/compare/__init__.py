"""Compare captures of a page over time: text, look and resources, and a change summary.

- :mod:`~archiver_app.compare.text`: line diff of normalised page texts with ignore patterns;
- :mod:`~archiver_app.compare.visual`: pixel diff of screenshots, changed regions boxed;
- :mod:`~archiver_app.compare.snapshots`: two captures of the library compared, honestly.
"""

from archiver_app.compare.snapshots import (
    ChangeSummary,
    Comparison,
    compare_captures,
)
from archiver_app.compare.text import compile_ignore_patterns, unified
from archiver_app.compare.visual import overlay

__all__ = [
    "ChangeSummary",
    "Comparison",
    "compare_captures",
    "compile_ignore_patterns",
    "overlay",
    "unified",
]
