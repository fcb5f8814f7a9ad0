"""Compare two captures: their text, their look and their resources, with a change summary.

The captures are found by id, uid or identifier (:mod:`archiver_app.capture_ref`); their
page text and screenshot are the files the capture kept (``files`` rows of kind ``text``
and ``screenshot``), their resources the ``records`` the capture wrote, their title and
HTTP status the snapshot's own. Only what the captures show is stated: a failed capture is
refused rather than compared (its missing text would read as a removal), and two captures
of different addresses are refused unless asked for explicitly.

A capture counts as changed when its text, its title (white space collapsed), its HTTP
status, its look or its resources differ. A page that starts answering an error (200 ->
404) is changed, and :attr:`ChangeSummary.now_error` says so apart from a rewrite; an
unknown status (an imported capture kept none) is not compared. The title is compared
whole: ignore patterns apply to the page text only.

A page's own document can differ in bytes alone (a CSRF token in a meta tag or a hidden
input, a script nonce): when both captures kept their text, that text is the same and the
look is too, the new HTML payload is measured and shown, with a note (:data:`HIDDEN`), but
is not a change. Ignore patterns say what in a page does not matter, but they cannot reach
its pixels or the bytes of its HTML: a visitor counter changes both on every capture. So
when the patterns left something out of either capture's text, differing pixels and the
page's own HTML payload do not make a capture changed either (:data:`QUIETED`); patterns
that matched nothing on the page explain nothing, and its look counts. A subresource with
another payload (an image swapped under the same address, a new stylesheet) always counts,
as do the text once the ignored parts are left out, the title, the HTTP status, the set of
resources loaded (``added``, ``removed``) and a resource that went from loading to an
error answer or back (``answers``: its image now answers 404). The page text is its text
file, or for an imported capture the text it kept in its WARC (``urn:text:``) or, failing
that, the text indexed for search; the text of the page's frames counts on both sides or
on neither (:mod:`.frames`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from archiver_app.capture.results import browser_favicon
from archiver_app.capture_ref import find_capture
from archiver_app.compare.frames import same_text
from archiver_app.compare.redirects import landed, redirect_note
from archiver_app.compare.text import TextDiff, diff_texts, ignores_any
from archiver_app.compare.visual import VisualDiff, diff_images
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.fulltext import MAX_BODY_CHARS, indexed_text
from archiver_app.store.models import File, FileKind, LocalState, Record, Snapshot, SnapshotState
from archiver_app.warc.views import TEXT, VIEW, view_text

#: Page texts read for a comparison are capped here (bounded memory for huge pages).
MAX_TEXT_BYTES = 8 * 1024 * 1024

#: Why differing pixels or the page's own HTML did not make a capture changed: the
#: ignore patterns left text out, and that text moves pixels and bytes too.
QUIETED = (
    "the look or the page's own HTML differs, not counted as a change: the ignored text "
    "explains it (the text with it left out, title, HTTP status and resources decide)"
)
#: Why the page's own HTML bytes alone did not make a capture changed.
HIDDEN = (
    "only the page's own HTML differs (a hidden token, a nonce), not counted as a change: "
    "its text and look are the same"
)

#: Record types that are a page's resources (request, metadata and resource records are not).
_RESOURCE_TYPES = ("response", "revisit")


@dataclass(frozen=True)
class CaptureRef:
    id: int
    uid: str
    url: str
    captured_at: datetime
    title: str | None = None
    http_status: int | None = None  # the page's answer (None: not recorded, e.g. an import)


@dataclass(frozen=True)
class ResourceAnswer:
    """A resource both captures asked for, whose answer went from loading (2xx, 3xx) to an
    error (4xx, 5xx) or back: a page whose image now answers 404 has changed, whatever the
    ignore patterns say."""

    url: str
    old_status: int
    new_status: int

    @property
    def now_error(self) -> bool:
        return is_error(self.new_status)


@dataclass(frozen=True)
class ResourceDiff:
    added: tuple[str, ...]  # URLs only the newer capture loaded
    removed: tuple[str, ...]  # URLs only the older capture loaded
    changed: tuple[str, ...]  # URLs both loaded, with a different payload or answer
    answers: tuple[ResourceAnswer, ...] = ()  # of ``changed``: loading <-> an error answer
    page: tuple[str, ...] = ()  # of ``changed``: the page's own document (not a subresource)

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    @property
    def now_error(self) -> tuple[ResourceAnswer, ...]:
        """The resources that loaded in the older capture and answer an error in the newer."""
        return tuple(a for a in self.answers if a.now_error)


@dataclass(frozen=True)
class ChangeSummary:
    """What a snapshot stores about its change against the previous capture of its URL."""

    changed: bool
    text_share: float | None  # None when either capture kept no text
    pixel_share: float | None  # None when either capture kept no screenshot
    resources_added: int
    resources_removed: int
    resources_changed: int
    # The two captures' titles, as they are (not kept in ``snapshot_changes``: the
    # snapshots hold them).
    old_title: str | None = None
    new_title: str | None = None
    old_status: int | None = None  # the two captures' HTTP status (None: not recorded)
    new_status: int | None = None
    # of ``resources_changed``: those that loaded before and now answer an error (404 ...)
    resources_now_error: int = 0
    # "now redirects to X", "no longer redirects to Y" (compare.redirects; None: as before)
    redirect: str | None = None

    @property
    def title_changed(self) -> bool:
        return not same_title(self.old_title, self.new_title)

    @property
    def status_changed(self) -> bool:
        return status_changed(self.old_status, self.new_status)

    @property
    def now_error(self) -> bool:
        """The page answers an error (4xx, 5xx) where the previous capture's did not."""
        return self.status_changed and is_error(self.new_status) and not is_error(self.old_status)

    def to_json(self) -> dict[str, object]:
        return {
            "changed": self.changed,
            "title_changed": self.title_changed,
            "status_changed": self.status_changed,
            "text_share": self.text_share,
            "pixel_share": self.pixel_share,
            "resources_added": self.resources_added,
            "resources_removed": self.resources_removed,
            "resources_changed": self.resources_changed,
            "resources_now_error": self.resources_now_error,
            "redirect": self.redirect,
        }


def is_error(status: int | None) -> bool:
    """An HTTP error answer: 4xx or 5xx."""
    return status is not None and status >= 400


def status_changed(old: int | None, new: int | None) -> bool:
    """Two known HTTP statuses that differ (an unknown one is not compared)."""
    return old is not None and new is not None and old != new


def same_title(old: str | None, new: str | None) -> bool:
    """Whether two titles read the same (white space collapsed; none and empty alike)."""
    return " ".join((old or "").split()) == " ".join((new or "").split())


@dataclass(frozen=True)
class Comparison:
    old: CaptureRef
    new: CaptureRef
    text: TextDiff | None
    visual: VisualDiff | None
    resources: ResourceDiff
    notes: tuple[str, ...]  # why a part could not be compared
    summary: ChangeSummary


def compare_captures(
    lib: Library,
    old_ref: str | int,
    new_ref: str | int,
    *,
    ignore: Sequence[re.Pattern[str]] = (),
    any_url: bool = False,
    kept_look: float | None = None,
) -> Comparison:
    """Compare two complete captures (older first in the result, whatever the order given).
    ``kept_look``: the share of pixels a kept comparison of the same two captures measured
    (ignore patterns do not reach pixels): the screenshots are not read again."""
    a, b = find_capture(lib, old_ref), find_capture(lib, new_ref)
    if a.id == b.id:
        raise InputError(f"{old_ref} and {new_ref} are the same capture: give two captures")
    for snap in (a, b):
        if snap.state != SnapshotState.COMPLETE:
            raise InputError(
                f"capture {snap.id} of {snap.url} is {snap.state}, not complete: only complete "
                "captures are compared (a failed one would read as everything removed)"
            )
    if a.url_group != b.url_group and not any_url:
        raise InputError(
            f"the captures are of different addresses ({a.url} and {b.url}); "
            "compare them anyway with --any-url"
        )
    if (b.captured_at, b.id) < (a.captured_at, a.id):
        a, b = b, a
    notes: list[str] = []
    text_a, text_b = _text(lib, a, notes), _text(lib, b, notes)
    if text_a is not None and text_b is not None:  # the frames' text on both sides, or neither
        text_a, text_b = same_text(a, text_a, b, text_b, notes)
    text = diff_texts(text_a, text_b, ignore) if text_a is not None and text_b is not None else None
    shot_a, shot_b = _screenshot(lib, a, notes), _screenshot(lib, b, notes)
    visual = diff_images(shot_a, shot_b) if shot_a and shot_b and kept_look is None else None
    look = visual.share_changed if visual else kept_look
    resources = resource_diff(lib, a.id, b.id, pages=(a, b))
    # the patterns explain pixels and HTML bytes only where they left text out
    ignored = text is not None and any(ignores_any(t or "", ignore) for t in (text_a, text_b))
    changed, quieted = _decide(text, look, resources, ignored=ignored)
    if not same_title(a.title, b.title) or status_changed(a.http_status, b.http_status):
        changed = True
    if not changed:
        notes.extend(quieted)
    summary = ChangeSummary(
        changed=changed,
        text_share=text.share_changed if text else None,
        pixel_share=look,
        resources_added=len(resources.added),
        resources_removed=len(resources.removed),
        resources_changed=len(resources.changed),
        old_title=a.title,
        new_title=b.title,
        old_status=a.http_status,
        new_status=b.http_status,
        resources_now_error=len(resources.now_error),
        redirect=redirect_note(landed(lib, [a.id, b.id]), a.id, b.id),
    )
    return Comparison(_ref(a), _ref(b), text, visual, resources, tuple(notes), summary)


def _decide(
    text: TextDiff | None, look: float | None, resources: ResourceDiff, *, ignored: bool
) -> tuple[bool, list[str]]:
    """Whether the text, look and resources make the newer capture changed, and the notes
    on what was measured without counting. The page's own HTML payload and its pixels are
    what ignored text (``ignored``: the patterns left something out) or a hidden token
    moves; a subresource with another payload counts whatever the patterns."""
    subresources = set(resources.changed) - set(resources.page)
    if (
        (text is not None and text.changed)
        or resources.added
        or resources.removed
        or resources.answers
        or subresources
    ):
        return True, []
    if look and not ignored:
        return True, []
    if resources.page and text is None:  # no text to say the HTML's change is hidden
        return True, []
    if ignored and (look or resources.page):
        return False, [QUIETED]
    return False, [HIDDEN] if resources.page else []


def screenshot_path(lib: Library, snapshot_id: int) -> Path | None:
    """The capture's screenshot file on this computer, or None."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            return None
        s.expunge(snap)
    return _file(lib, snap, FileKind.SCREENSHOT, [])


def screenshot(lib: Library, snapshot_id: int) -> Path | bytes | None:
    """The capture's screenshot: its file on this computer, else the PNG of the
    ``urn:view:`` record it kept in its WARC (a capture imported from a WACZ or a WARC has
    no file of it); None when it has neither."""
    with lib.session() as s:
        snap = s.get(Snapshot, snapshot_id)
        if snap is None:
            return None
        s.expunge(snap)
    return _screenshot(lib, snap, [])


def kept_screenshot(lib: Library, snapshot_id: int) -> bytes | None:
    """The payload of the ``urn:view:`` record the capture kept in its WARC, if any."""
    from archiver_app.replay.replayer import Replayer

    return Replayer.for_library(lib).kept_view(snapshot_id, VIEW) or None


def _screenshot(lib: Library, snap: Snapshot, notes: list[str]) -> Path | bytes | None:
    missing: list[str] = []
    found = _file(lib, snap, FileKind.SCREENSHOT, missing) or kept_screenshot(lib, snap.id)
    if found is None:
        notes.extend(missing)
    return found


def _ref(snap: Snapshot) -> CaptureRef:
    return CaptureRef(snap.id, snap.uid, snap.url, snap.captured_at, snap.title, snap.http_status)


def _file(lib: Library, snap: Snapshot, kind: FileKind, notes: list[str]) -> Path | None:
    with lib.session() as s:
        row = s.execute(
            select(File.path, File.local_state, File.external_path)
            .where(File.snapshot_id == snap.id, File.kind == kind)
            .order_by(File.id)
        ).first()
    what = "page text" if kind == FileKind.TEXT else "screenshot"
    if row is None:
        notes.append(f"capture {snap.id} kept no {what}")
        return None
    if row.local_state != LocalState.PRESENT:
        notes.append(f"capture {snap.id}'s {what} is not on this computer (offloaded)")
        return None
    path = Path(row.external_path) if row.external_path else lib.abspath(row.path)
    if not path.is_file():
        notes.append(f"capture {snap.id}'s {what} is missing from its folder")
        return None
    return path


def _text(lib: Library, snap: Snapshot, notes: list[str]) -> str | None:
    """The capture's page text: its text file; else (a capture imported from a WACZ or a
    WARC has none) the ``urn:text:`` record it kept in its WARC; else the text the library
    indexed for it for search (white space flattened: one line)."""
    missing: list[str] = []
    path = _file(lib, snap, FileKind.TEXT, missing)
    if path is not None:
        with path.open("rb") as fh:
            data = fh.read(MAX_TEXT_BYTES + 1)
    else:
        from archiver_app.replay.replayer import Replayer

        data = Replayer.for_library(lib).kept_view(snap.id, TEXT) or b""
        if not data.strip():
            return _indexed_text(lib, snap, missing, notes)
    if len(data) > MAX_TEXT_BYTES:
        notes.append(f"capture {snap.id}'s text is longer than {MAX_TEXT_BYTES} bytes: cut")
        data = data[:MAX_TEXT_BYTES]
    return view_text(data)


def _indexed_text(lib: Library, snap: Snapshot, missing: list[str], notes: list[str]) -> str | None:
    with lib.session() as s:
        found = indexed_text(s.connection(), snap.id)
    if found is None or not found[2].strip():  # no text at all: not "everything removed"
        notes.extend(missing)
        return None
    cut = f", its first {MAX_BODY_CHARS:,} characters" if len(found[2]) >= MAX_BODY_CHARS else ""
    notes.append(
        f"capture {snap.id} kept no page text: its text indexed for search is compared{cut}"
    )
    return found[2]


def resource_diff(
    lib: Library, old_id: int, new_id: int, *, pages: Sequence[Snapshot] = ()
) -> ResourceDiff:
    """Subresources added, removed and changed (by payload digest, or by an answer that went
    from loading to an error or back) between two captures. ``pages``: the two snapshots,
    whose own document (their address, or the record of their main payload digest) is
    named apart in ``page``."""
    old, new = _resources(lib, old_id), _resources(lib, new_id)
    both = old.keys() & new.keys()
    answers = tuple(
        answer for url in sorted(both) if (answer := _answer_change(url, old[url], new[url]))
    )
    moved = {a.url for a in answers}
    changed = tuple(sorted(u for u in both if old[u].digests != new[u].digests or u in moved))
    urls = {p.url for p in pages}
    digests = {p.content_hash for p in pages if p.content_hash}
    return ResourceDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=changed,
        answers=answers,
        page=tuple(
            u
            for u in changed
            if u not in moved and (u in urls or (old[u].digests | new[u].digests) & digests)
        ),
    )


def resources_now_error(lib: Library, pairs: Mapping[int, int]) -> dict[int, int]:
    """For each newer capture id -> older capture id in ``pairs``: how many of its resources
    answer an error where the older capture's loaded (:attr:`ResourceDiff.now_error`, for
    many kept comparisons at once: only resources that answered an error are read)."""
    found: dict[int, int] = {}
    if not pairs:
        return found
    with lib.session() as s:
        failing = s.execute(
            select(Record.snapshot_id, Record.url).where(
                Record.snapshot_id.in_(list(pairs)),
                Record.record_type.in_(_RESOURCE_TYPES),
                Record.status >= 400,
            )
        ).all()
        failing_in: dict[int, set[str]] = {}
        for sid, url in failing:
            if sid is not None and _counted(url, None):
                failing_in.setdefault(sid, set()).add(url)
        urls = set().union(*failing_in.values())
        if not urls:
            return found
        rows = s.execute(
            select(Record.snapshot_id, Record.url, Record.digest, Record.status).where(
                Record.snapshot_id.in_([*pairs, *pairs.values()]),
                Record.record_type.in_(_RESOURCE_TYPES),
                Record.url.in_(urls),
            )
        ).all()
    seen: dict[tuple[int, str], _Seen] = {}
    for sid, url, digest, status in rows:
        if sid is not None and _counted(url, status):
            _add(seen.setdefault((sid, url), _Seen(set(), set())), digest, status)
    for new_id, old_id in pairs.items():
        for url in failing_in.get(new_id, ()):
            old, new = seen.get((old_id, url)), seen.get((new_id, url))
            answer = _answer_change(url, old, new) if old and new else None
            if answer is not None and answer.now_error:
                found[new_id] = found.get(new_id, 0) + 1
    return found


@dataclass
class _Seen:
    """What one capture holds of one resource URL: its payloads and the answers it got."""

    digests: set[str]
    statuses: set[int]


def _add(seen: _Seen, digest: str | None, status: int | None) -> None:
    seen.digests.add(digest or f"status {status}")
    if status is not None:
        seen.statuses.add(status)


def _answer(seen: _Seen) -> int | None:
    """The resource's answer in a capture: a loading one if it got any, else its error."""
    loading = [st for st in seen.statuses if not is_error(st)]
    return min(loading or seen.statuses, default=None)


def _answer_change(url: str, old: _Seen, new: _Seen) -> ResourceAnswer | None:
    before, after = _answer(old), _answer(new)
    if before is None or after is None or is_error(before) == is_error(after):
        return None
    return ResourceAnswer(url, before, after)


def _counted(url: str, status: int | None) -> bool:
    """Whether a record is one of the page's resources for a comparison."""
    if url.startswith("urn:") or status == 206:
        return False  # views kept beside the page; parts of a range
    # a crawl's later pages lack the browser's own favicon request
    return not browser_favicon(url)


def _resources(lib: Library, snapshot_id: int) -> dict[str, _Seen]:
    found: dict[str, _Seen] = {}
    with lib.session() as s:
        rows = s.execute(
            select(Record.url, Record.digest, Record.status).where(
                Record.snapshot_id == snapshot_id, Record.record_type.in_(_RESOURCE_TYPES)
            )
        )
        for url, digest, status in rows:
            if _counted(url, status):
                _add(found.setdefault(url, _Seen(set(), set())), digest, status)
    return found
