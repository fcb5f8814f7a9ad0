"""Capture-time integrity: each archive file's digest as its capture or import wrote it,
and ``archiver verify``, which tells a later change apart from bit rot repaired from a drive.

- :mod:`.digests`: which files get a capture-time digest (``files.origin_sha256``).
- :mod:`.judge`: the one rule (intact, bit rot, altered, missing) ``verify`` and the
  mirror's scrub share.
- :mod:`.verify`: :func:`verify_snapshots` and its outcome codes.
"""

from typing import TYPE_CHECKING, Any

from archiver_app.integrity.digests import CHECKED_KINDS
from archiver_app.integrity.judge import IntegrityCode, judge

if TYPE_CHECKING:
    from archiver_app.integrity.verify import IntegrityReport, verify_snapshots

__all__ = [
    "CHECKED_KINDS",
    "IntegrityCode",
    "IntegrityReport",
    "judge",
    "verify_snapshots",
]

_LAZY = frozenset({"IntegrityReport", "verify_snapshots"})


def __getattr__(name: str) -> Any:
    """The verifier loads on first use (it brings the mirror's copier): reading digests or
    judging a file, as the GUI and the capture path do, stays light."""
    if name in _LAZY:
        from archiver_app.integrity import verify

        return getattr(verify, name)
    raise AttributeError(name)
