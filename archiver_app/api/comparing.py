"""Two captures compared as a person asks for it: ``archiver diff`` and the Compare view.

The one place that decides which ignore patterns a comparison uses. Two captures of a
watched address are compared with that watch's ignored text (the watch the newer capture's
job is or is a run of, else the watch of its address: the rule the Changes list was
compared by, :func:`archiver_app.watch.runner.watch_ignore_of`), so a comparison a person
opens agrees with the Changes list; patterns given here are added to the watch's. Asked
not to (``watch_ignore=False``), only the patterns given apply: the raw comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from archiver_app.capture_ref import find_capture
from archiver_app.compare.snapshots import Comparison, compare_captures
from archiver_app.compare.text import compile_ignore_patterns
from archiver_app.library import Library
from archiver_app.watch.runner import WatchIgnore, watch_ignore_of


@dataclass(frozen=True)
class ComparedCaptures:
    """A comparison and the patterns it left out, with where they came from."""

    comparison: Comparison
    watch: WatchIgnore | None  # the watch of the captures' address (None: not watched)
    watch_applied: bool  # its patterns were used (False: none, or the raw diff was asked for)
    given: tuple[str, ...]  # the patterns asked for besides

    @property
    def patterns(self) -> tuple[str, ...]:
        """Every pattern the comparison used, the watch's first."""
        own = self.watch.patterns if self.watch is not None and self.watch_applied else ()
        return (*own, *self.given)


def compare(
    lib: Library,
    old_ref: str | int,
    new_ref: str | int,
    *,
    ignore: Sequence[str] = (),
    watch_ignore: bool = True,
    any_url: bool = False,
) -> ComparedCaptures:
    """Compare two captures (by id or uid), with the watch's ignored text when both are of
    one watched address (``watch_ignore``), plus ``ignore``. A bad pattern, a capture not
    complete, two addresses without ``any_url``: :class:`~archiver_app.errors.InputError`."""
    given = tuple(ignore)
    compile_ignore_patterns(given)  # a bad pattern is refused before anything is read
    a, b = find_capture(lib, old_ref), find_capture(lib, new_ref)
    newer = b if (a.captured_at, a.id) <= (b.captured_at, b.id) else a
    watch = watch_ignore_of(lib, newer.id) if a.url_group == b.url_group else None
    applied = bool(watch_ignore and watch is not None and watch.patterns)
    own = watch.patterns if watch is not None and applied else ()
    comparison = compare_captures(
        lib,
        a.id,
        b.id,
        ignore=compile_ignore_patterns((*own, *given)),
        any_url=any_url,
    )
    return ComparedCaptures(comparison, watch, applied, given)
