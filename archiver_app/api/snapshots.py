"""One capture at a time: its details, notes, screenshot, where the replay opens it and the
timeline around it.

Small indexed queries, safe to run on any thread; the detail pane runs them in the
background because a drive's copies table can be large.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.api.changes import Changes
from archiver_app.api.deletion import DeleteResult
from archiver_app.api.timeline import Timeline, route_timeline
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror.deps import snapshots_files
from archiver_app.mirror.status import SnapshotCopiesReport, snapshot_copies
from archiver_app.store.models import (
    CopyState,
    Fidelity,
    File,
    FileKind,
    Job,
    Snapshot,
    SnapshotTag,
    Tag,
)
from archiver_app.units import human_bytes
from archiver_app.urls import display_url
from archiver_app.watch.schedule import SCHEDULE_PAUSED, describe_schedule

if TYPE_CHECKING:
    from archiver_app.api.comparing import ComparedCaptures
    from archiver_app.cite.metadata import PageMeta


@dataclass(frozen=True)
class ReplayTarget:
    """What the replay needs to open a capture: its address, time and a tab title."""

    url: str
    captured_at: datetime
    title: str


class SnapshotsManager:
    """``lib.snapshots``: reads of one capture, and its note edits."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def detail(self, snapshot_id: int) -> SnapshotDetail | None:
        with self._lib.session() as s:
            found = _detail(s, snapshot_id)
        if found is None:
            return None
        report = snapshot_copies(self._lib, snapshot_id)
        meta = _page_meta(self._lib, snapshot_id)
        return replace(
            found,
            copies=_copy_rows(report),
            whole_copies=report.safe_copies,
            authors=", ".join(a.natural() for a in meta.authors),
            published="-".join(f"{p:02d}" for p in meta.issued or ()),
        )

    def exists(self, snapshot_id: int) -> bool:
        """Whether the capture is still in the library (not deleted, here or by another
        process or computer sharing it)."""
        with self._lib.session() as s:
            return s.scalar(select(Snapshot.id).where(Snapshot.id == snapshot_id)) is not None

    def titles(self, snapshot_ids: Sequence[int]) -> dict[int, str]:
        """The titles of the captures ``snapshot_ids`` that have one (whitespace runs made
        one space), for lists that name captures (the replay timeline)."""
        ids = sorted(set(snapshot_ids))
        found: dict[int, str] = {}
        with self._lib.session() as s:
            for start in range(0, len(ids), 500):
                rows = s.execute(
                    select(Snapshot.id, Snapshot.title).where(
                        Snapshot.id.in_(ids[start : start + 500])
                    )
                )
                found.update((sid, " ".join(t.split())) for sid, t in rows if t and t.strip())
        return found

    def replay_target(self, snapshot_id: int) -> ReplayTarget | None:
        with self._lib.session() as s:
            snap = s.get(Snapshot, snapshot_id)
            if snap is None:
                return None
            return ReplayTarget(snap.url, snap.captured_at, snap.title or snap.url)

    def timeline(self, url: str) -> Timeline:
        """The replay timeline of ``url``: its route's captures and the document's other
        routes (:mod:`.timeline`)."""
        from archiver_app.replay import Replayer

        return route_timeline(Replayer.for_library(self._lib).captures_of(url), url)

    def capture_browser(self, snapshot_id: int) -> str | None:
        """The browser that made the capture, as its provenance names it (a version such as
        ``156.0.8078.108``, else its user agent); None when it does not say (imports)."""
        with self._lib.session() as s:
            provenance = s.scalar(select(Snapshot.provenance).where(Snapshot.id == snapshot_id))
        if not isinstance(provenance, dict):
            return None
        for key in ("browser", "user_agent"):
            value = provenance.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    def screenshot(self, snapshot_id: int) -> Path | bytes | None:
        """The screenshot of ``snapshot_id``: its file, else the PNG its WARC keeps (an
        imported capture's: :func:`archiver_app.compare.snapshots.screenshot`)."""
        from archiver_app.compare.snapshots import screenshot

        return screenshot(self._lib, snapshot_id)

    def kept_screenshot(self, snapshot_id: int) -> bytes | None:
        """The PNG of the ``urn:view:`` record ``snapshot_id`` kept in its WARC, if any
        (what an imported capture has for a screenshot)."""
        from archiver_app.compare.snapshots import kept_screenshot

        return kept_screenshot(self._lib, snapshot_id)

    def screenshot_path(self, snapshot_id: int) -> Path | None:
        """The stored screenshot of ``snapshot_id`` when it is on disk."""
        with self._lib.session() as s:
            rel = s.scalar(
                select(File.path)
                .where(File.snapshot_id == snapshot_id, File.kind == FileKind.SCREENSHOT)
                .order_by(File.id)
                .limit(1)
            )
        if rel is None:
            return None
        path = self._lib.abspath(str(rel))
        return path if path.is_file() else None

    def compare(
        self,
        old_ref: str | int,
        new_ref: str | int,
        *,
        ignore: Sequence[str] = (),
        watch_ignore: bool = True,
        any_url: bool = False,
    ) -> ComparedCaptures:
        """Two captures compared (``archiver diff``, the Compare view): with the watch's
        ignored text when they are of a watched address (``watch_ignore``), plus
        ``ignore`` (:mod:`.comparing` decides, for both front ends)."""
        from archiver_app.api.comparing import compare

        return compare(
            self._lib, old_ref, new_ref, ignore=ignore, watch_ignore=watch_ignore, any_url=any_url
        )

    def delete(self, snapshot_ids: list[int]) -> tuple[DeleteResult, Changes]:
        """Delete captures (rows, index, laptop files); members of an accepted edition
        and captures later ones depend on are refused, each with its reason."""
        from archiver_app.api.deletion import delete_snapshots

        result = delete_snapshots(self._lib, snapshot_ids)
        changed = Changes.of_snapshots(result.deleted) if result.deleted else Changes()
        return result, changed | Changes(collections=bool(result.editions_to_review))

    def shared_collection(self, snapshot_ids: Sequence[int]) -> str | None:
        """The slug of the collection every one of ``snapshot_ids`` is in (None: they are
        in several, or none is found): where capturing them again belongs."""
        from archiver_app.store.models import Collection

        with self._lib.session() as s:
            slugs = s.scalars(
                select(Collection.slug)
                .join(Snapshot, Snapshot.collection_id == Collection.id)
                .where(Snapshot.id.in_(list(snapshot_ids)))
                .distinct()
                .limit(2)
            ).all()
        return slugs[0] if len(slugs) == 1 else None

    def delete_refusals(self, snapshot_ids: list[int]) -> list[str]:
        """Why :meth:`delete` would refuse some of ``snapshot_ids`` now (asked before the
        question "Delete?"), one reason a capture."""
        from archiver_app.api.deletion import refusals

        return [o.message for o in refusals(self._lib, snapshot_ids)]

    def set_notes(self, snapshot_id: int, notes: str, *, expected: str | None = None) -> Changes:
        """Keep ``notes`` on the capture; search finds it by them.

        Args:
            expected: the note the editor started from (as it was loaded). When the stored
                note is not that any more (changed elsewhere: another window, machine or
                the command line), nothing is written. None: written whatever is stored.

        Raises:
            NotesChangedElsewhere: ``expected`` is not the stored note; it holds both.
            InputError: the capture is gone (deleted elsewhere); its details hold ``notes``.
        """
        from archiver_app.api.labels import reindex_own_words

        with self._lib.write() as s:
            # locked on PostgreSQL: two saves of one capture's notes (two windows) wait for
            # each other instead of both re-indexing it and clashing on snapshot_fts's key,
            # and the second compares with what the first wrote
            snap = s.get(Snapshot, snapshot_id, with_for_update=True)
            if snap is None:
                raise InputError(
                    f"capture {snapshot_id} was deleted (perhaps from another window or"
                    " machine); the note was not saved",
                    details=f"The note that was not saved:\n\n{notes}",
                )
            stored = snap.notes or ""
            if expected is not None and stored not in (expected, notes):
                raise NotesChangedElsewhere(snapshot_id, stored=stored, mine=notes)
            snap.notes = notes
            s.flush()
            reindex_own_words(s.connection(), snapshot_id)
        return Changes.of_snapshots([snapshot_id])


class NotesChangedElsewhere(InputError):
    """A note saved over one changed elsewhere since the editor loaded it: nothing was
    written. ``stored`` is the note as it is now, ``mine`` the text that was not saved."""

    def __init__(self, snapshot_id: int, *, stored: str, mine: str) -> None:
        super().__init__(
            f"the note of capture {snapshot_id} was changed elsewhere (another window or"
            " machine) since it was opened here; this one was not saved",
            details=f"The note as it is now:\n\n{stored}\n\nThe note not saved:\n\n{mine}",
        )
        self.snapshot_id, self.stored, self.mine = snapshot_id, stored, mine


#: The line between the stored note and the one kept with it (:func:`both_notes`).
KEPT_BOTH_MARK = "--- kept from an edit made elsewhere at the same time ---"


def both_notes(stored: str, mine: str) -> str:
    """One note holding both versions: ``stored``, then ``mine`` below a marked line."""
    if not stored.strip():
        return mine
    if not mine.strip() or mine == stored:
        return stored
    return f"{stored.rstrip()}\n\n{KEPT_BOTH_MARK}\n{mine}"


@dataclass(frozen=True)
class CopyRow:
    where: str  # "Laptop" or the destination label
    state: str
    verified_at: datetime | None = None


@dataclass(frozen=True)
class SnapshotDetail:
    id: int
    uid: str
    url: str
    title: str
    captured_at: datetime
    state: str
    http_status: int | None
    mime: str
    size_bytes: int
    fidelity: str
    fidelity_reason: str
    folder: str | None
    collection: str
    notes: str
    tags: list[str]
    files: list[tuple[str, str, int]]  # kind, path, size
    other_captures: list[tuple[int, datetime, str]]  # id, captured_at, state
    copies: list[CopyRow] = field(default_factory=list)
    whole_copies: int = 0  # the laptop's and each drive's that can replay it alone
    profile: str | None = None  # captured in this browser profile: may show private data
    watched: str | None = None  # its address is watched: the schedule and next capture
    authors: str = ""  # as the page names them (cite.metadata), "" when it does not
    published: str = ""  # the page's own date: 2026, 2026-03 or 2026-03-04; "" when none
    size_note: str = ""  # what ``size_bytes`` counts (:func:`size_note`)

    @property
    def shown_url(self) -> str:
        """The address as people read it (``/мир``, not ``/%D0%BC...``): see
        :func:`archiver_app.urls.display_url`; ``url`` is the stored form."""
        return display_url(self.url)


def size_note(fidelity: str | None, files: Sequence[tuple[str, str, int]]) -> str:
    """What a capture's size counts, in a few words. A capture's size is its files: its WARC
    and, beside it, the screenshot, DOM and text it also keeps as records in the WARC, and
    its ``index.json``. An imported page's size is its records in the imported WARC (whose
    ``urn:view:``, ``urn:dom:`` and ``urn:text:`` records are its screenshot, DOM and text):
    the same capture is smaller imported, by the files a capture keeps besides."""
    if fidelity == Fidelity.IMPORTED:
        return "its records in the imported WARC, no files beside it"
    warc = sum(size for kind, _, size in files if kind == FileKind.WARC)
    rest = sum(size for kind, _, size in files if kind != FileKind.WARC)
    if not warc or not rest:
        return ""
    return f"WARC {human_bytes(warc)} + screenshot, DOM, text files {human_bytes(rest)}"


def _page_meta(lib: Library, snapshot_id: int) -> PageMeta:
    """The authors and date the archived page declares (what its citation says).
    Imported here: the HTML and PDF readers are ~45 ms the window's start need not pay."""
    from archiver_app.cite.metadata import declared
    from archiver_app.replay.pages import stored_page

    return declared(stored_page(lib, snapshot_id))


def _watched(s: Session, url: str) -> str | None:
    """How the address ``url`` is watched (schedule in words, next capture), if it is."""
    watches = s.execute(
        select(Job.schedule, Job.next_run_at, Job.config).where(Job.schedule.is_not(None))
    )
    for schedule, next_run_at, config in watches:
        if url in ((config or {}).get("seeds") or ()):
            when = f"; next {next_run_at:%Y-%m-%d %H:%M} UTC" if next_run_at else ""
            if (config or {}).get(SCHEDULE_PAUSED):
                when = "; paused"
            return f"{describe_schedule(schedule)}{when}"
    return None


def _fidelity_reason(provenance: dict[str, Any] | None) -> str:
    if not provenance:
        return ""
    for key in ("fidelity_reason", "reason", "fallback_reason", "error"):
        value = provenance.get(key)
        if value:
            return str(value)
    return ""


def _detail(s: Session, snapshot_id: int) -> SnapshotDetail | None:
    """Everything the detail pane shows for one capture (a handful of indexed queries)."""
    snap = s.get(Snapshot, snapshot_id)
    if snap is None:
        return None
    tags = list(
        s.scalars(
            select(Tag.name)
            .join(SnapshotTag, SnapshotTag.tag_id == Tag.id)
            .where(SnapshotTag.snapshot_id == snapshot_id)
            .order_by(Tag.name)
        )
    )
    files = s.execute(  # with the WARC it shares with other pages, if imported so
        select(File.kind, File.path, File.size)
        .where(File.id.in_(sorted(snapshots_files(s, [snapshot_id]))))
        .order_by(File.kind, File.path)
    ).all()
    others = s.execute(
        select(Snapshot.id, Snapshot.captured_at, Snapshot.state)
        .where(Snapshot.url_group == snap.url_group, Snapshot.id != snapshot_id)
        .order_by(Snapshot.captured_at.desc())
        .limit(200)
    ).all()
    return SnapshotDetail(
        id=snap.id,
        uid=snap.uid,
        url=snap.url,
        title=snap.title or "",
        captured_at=snap.captured_at,
        state=snap.state,
        http_status=snap.http_status,
        mime=snap.mime or "",
        size_bytes=snap.size_bytes,
        fidelity=snap.capture_fidelity or "",
        fidelity_reason=_fidelity_reason(snap.provenance),
        folder=snap.folder,
        collection=snap.collection.name,
        notes=snap.notes or "",
        tags=tags,
        files=[(f[0], f[1], int(f[2])) for f in files],
        size_note=size_note(snap.capture_fidelity, [(f[0], f[1], int(f[2])) for f in files]),
        other_captures=[(o[0], o[1], o[2]) for o in others],
        profile=snap.profile,
        watched=_watched(s, snap.url),
    )


def _copy_rows(report: SnapshotCopiesReport) -> list[CopyRow]:
    """One row for the laptop (the worst state of its files) and one per destination."""
    if not report.local_states:
        return []
    rank = {CopyState.CORRUPTED: 0, CopyState.MISSING: 1, CopyState.ONGOING: 2, "offloaded": 3}
    rows = [CopyRow("Laptop", min(report.local_states, key=lambda st: rank.get(st, 9)))]
    for d in report.destinations:
        state = (
            "retired"  # what is on it stays there, and counts as no copy
            if d.retired
            else CopyState.CORRUPTED
            if d.corrupted
            else CopyState.PRESENT
            if d.safe
            else CopyState.MISSING
        )
        rows.append(CopyRow(d.label, state, d.last_verified_at))
    return rows
