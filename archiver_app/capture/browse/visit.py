"""One page visited while browsing: its WARC, its latest views, and how it is saved.

A :class:`Visit` begins when the browser starts loading it (a top-level document request)
or shows it without one (a view of a single-page app, a page restored from history). It
writes its ``pending`` row at once, on the session's thread for rows, and opens its
snapshot folder and its ``capture.warc.gz.part`` only when the first record is written and
that row is in: a kill at any moment leaves no ``.part`` that no row names, so the next
start reports or salvages it (:func:`archiver_app.capture.persist.mark_interrupted`). A
document request the browser never shows and that wrote nothing is discarded, row and all
(:func:`discard_visit`).

While it is open, the tab routes to its WARC every exchange that belongs to it
(:mod:`.tab`). When the user leaves it, :func:`save_visit` writes the views (screenshot,
DOM, text) as files and ``resource`` records, closes the WARC under its final name and
saves the snapshot through the same path a capture uses
(:func:`archiver_app.capture.persist.finish_snapshot`).

The views kept are the newest known: the session's last snapshot of the page (taken when
the page was quiet after a change, and at Stop), the note the page sent as it was left
(:mod:`.inpage`: DOM and text at that moment) and the screenshot taken while the request
for the next document was held (:mod:`.tab`).

Threading contract: a visit is changed on the session's event loop; :func:`save_visit`
runs in a worker thread once the tab no longer routes anything to the visit.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from archiver_app import __version__
from archiver_app.capture.browse.inpage import LeaveNote
from archiver_app.capture.extract import PageFacts, make_snippet
from archiver_app.capture.persist import (
    SnapshotOutcome,
    create_pending,
    delete_pending,
    finish_snapshot,
    write_views,
)
from archiver_app.jobs.pipeline import Pool
from archiver_app.layout.current import snapshot_folder
from archiver_app.library import Library
from archiver_app.store.models import Fidelity, FileKind, SnapshotState
from archiver_app.warc.surt import strip_fragment
from archiver_app.warc.writer import CaptureWarcWriter, WrittenRecord

WARC_NAME = "capture.warc.gz"


class VisitState(StrEnum):
    LOADING = "loading"  # its document was requested; the browser does not show it yet
    CURRENT = "current"  # the page the tab shows
    LEAVING = "leaving"  # the tab moved on; waiting a moment for the page's leave note
    SAVED = "saved"


class ViewsFrom(StrEnum):
    """Where a saved page's DOM and text came from."""

    LEAVE = "leave"  # read as the user left it (by the session, or the page's own note)
    SNAPSHOT = "snapshot"  # the session's last snapshot (when quiet after a change, at Stop)
    NONE = "none"  # neither: the page was left before it could be read


@dataclass(frozen=True)
class Views:
    """What the page looked like at one moment."""

    url: str
    dom: str | None
    facts: PageFacts
    shot: bytes | None
    leaving: bool = False  # read as the user left the page
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class SessionFacts:
    """What every visit of a session shares."""

    collection: str
    collection_id: int
    job_id: int | None
    browser_version: str | None
    profile: str | None


@dataclass(frozen=True)
class SavedPage:
    """One page saved by a browsing session (``ok`` False: only its WARC was kept)."""

    snapshot_id: int
    url: str
    title: str | None
    ok: bool
    fidelity: str | None
    responses: int
    views_from: ViewsFrom
    tab: int
    error: str | None = None


class Visit:
    """See the module docstring. ``nav_request`` is the request id of its document (None
    when it was shown without one); ``loader`` the DevTools loader id of that document."""

    def __init__(
        self,
        lib: Library,
        facts: SessionFacts,
        *,
        url: str,
        tab: int,
        nav_request: str | None,
        loader: str | None,
        state: VisitState,
        rows: Pool,
    ) -> None:
        self.url, self.tab, self.state = url, tab, state
        self.nav_request, self.loader = nav_request, loader
        self.lib, self.facts = lib, facts
        self.captured_at = lib.clock()
        self.uid = lib.new_uid(self.captured_at)
        self.folder = snapshot_folder(facts.collection, self.captured_at, self.uid).as_posix()
        self.row: Future[int] = rows.submit(  # the session's thread for rows
            create_pending,
            lib,
            url=url,
            collection_id=facts.collection_id,
            captured_at=self.captured_at,
            uid=self.uid,
            folder=self.folder,
            job_id=facts.job_id,
        )
        self._writer: CaptureWarcWriter | None = None
        self.shown = False  # the tab showed it: saved even when it wrote nothing
        self.open = True  # the tab routes exchanges here
        self.views: Views | None = None
        self.note: LeaveNote | None = None
        self.noted_at = 0.0
        self.noted = asyncio.Event()
        self.leave_shot: bytes | None = None  # taken as the next document was requested
        self.leave_shot_at = 0.0
        self.tick = -2  # the page's change counter at the last snapshot
        self.activity = 0.0  # the recorder's last activity at the last snapshot
        self.document_url: str | None = None  # the final URL of its document request

    @property
    def writer(self) -> CaptureWarcWriter:
        """Its WARC, opened when first asked for, once its ``pending`` row is in.

        The row's thread started as the request left, so the wait is normally over before
        the first answer is in. A row that could not be written still lets the records be
        kept (the save then reports the failure, :meth:`.session.BrowseSession._save`)."""
        if self._writer is None:
            with contextlib.suppress(Exception):
                self.row.result()
            path = self.lib.abspath(self.folder)
            path.mkdir(parents=True, exist_ok=True)
            self._writer = CaptureWarcWriter(
                path / WARC_NAME,
                info={
                    "software": f"Archiver {__version__} (Playwright + Chromium, browsing)",
                    "format": "WARC File Format 1.1",
                    "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
                    "browser": f"Chromium {self.facts.browser_version or ''}".strip(),
                    "isPartOf": self.facts.collection,
                    "description": f"Capture while browsing of {self.url}",
                },
                clock=self.lib.clock,
            )
        return self._writer

    @property
    def wrote(self) -> bool:
        """Whether anything but its ``warcinfo`` record was written."""
        w = self._writer
        return w is not None and any(r.record_type != "warcinfo" for r in w.records)

    def abandon(self) -> None:
        """Close its WARC as it is, still named ``.part`` (the save failed)."""
        if self._writer is not None:
            self._writer.abandon()

    def take_note(self, note: LeaveNote) -> None:
        self.note, self.noted_at = note, time.monotonic()
        self.noted.set()

    def take_leave_shot(self, shot: bytes) -> None:
        self.leave_shot, self.leave_shot_at = shot, time.monotonic()

    def final_views(self) -> tuple[Views | None, ViewsFrom]:
        """The newest DOM and text known, with the newest screenshot."""
        views, note = self.views, self.note
        shot, shot_at = (views.shot, views.at) if views is not None else (None, 0.0)
        if self.leave_shot is not None and self.leave_shot_at >= shot_at:
            shot = self.leave_shot
        if note is not None and (views is None or self.noted_at >= views.at):
            facts = note.facts  # the page's own note reads no frames: the last snapshot did
            if views is not None and views.facts.frames_at is not None:
                facts = facts.with_frames(views.facts.frames_text)
            return Views(note.url, note.dom, facts, shot, True, self.noted_at), ViewsFrom.LEAVE
        if views is not None:
            views = dataclasses.replace(views, shot=shot)
            return views, ViewsFrom.LEAVE if views.leaving else ViewsFrom.SNAPSHOT
        return None, ViewsFrom.NONE


def main_record(records: list[WrittenRecord], document_url: str | None) -> WrittenRecord | None:
    """The record of the visit's document: the last response written for its final URL."""
    if document_url is None:
        return None
    wanted = strip_fragment(document_url)
    found = None
    for record in records:
        if record.record_type in ("response", "revisit") and record.url == wanted:
            found = record
    return found


def save_visit(lib: Library, visit: Visit, facts: SessionFacts, snapshot_id: int) -> SavedPage:
    """Write the views, close the WARC and save the snapshot (one transaction)."""
    views, views_from = visit.final_views()
    main = main_record(visit.writer.records, visit.document_url)
    reasons: list[str] = []
    if main is None:
        reasons.append(
            "no response of its own: a view of a single-page app, or shown from the browser's"
            " memory"
            if visit.nav_request is None
            else "its document's response was not recorded"
        )
    files = _write_views(lib, visit, views, main, reasons)
    responses = [r for r in visit.writer.records if r.record_type in ("response", "revisit")]
    _write_pageinfo(visit, views, views_from, responses, main)
    visit.writer.close()
    files.insert(0, (f"{visit.folder}/{WARC_NAME}", FileKind.WARC))
    ok = main is not None or (views is not None and views.dom is not None)
    error = None if ok else "the page was left before anything of it could be recorded"
    page_facts = views.facts if views is not None else PageFacts()
    final_url = views.url if views is not None else visit.url
    if views_from is ViewsFrom.SNAPSHOT:
        reasons.append("DOM and text from the last snapshot before the page was left")
    fidelity = (Fidelity.FALLBACK if reasons else Fidelity.HIGH) if ok else None
    provenance: dict[str, Any] = {
        "backend": "playwright",
        "mode": "browse",
        "browser": facts.browser_version,
        "profile": facts.profile,
        "tab": visit.tab,
        "views_from": views_from.value,
        "fidelity_reasons": reasons,
        **page_facts.provenance(),
    }
    if error:
        provenance["error"] = error
    outcome = SnapshotOutcome(
        snapshot_id=snapshot_id,
        url=visit.url,
        state=SnapshotState.COMPLETE if ok else SnapshotState.FAILED,
        folder=visit.folder,
        files=files,
        records=visit.writer.records,
        main=main,
        http_status=main.status if main else None,
        mime=main.mime if main else "text/html",
        title=page_facts.title or None,
        snippet=make_snippet(page_facts.text) or None,
        language=page_facts.language,
        fidelity=fidelity,
        provenance=provenance,
        content_hash=main.digest if main else None,
        text=page_facts.text,
    )
    finish_snapshot(
        lib,
        outcome,
        uid=visit.uid,
        collection=facts.collection,
        captured_at=visit.captured_at,
        final_url=final_url,
        job_id=facts.job_id,
    )
    return SavedPage(
        snapshot_id=snapshot_id,
        url=visit.url,
        title=outcome.title,
        ok=ok,
        fidelity=fidelity,
        responses=len(responses),
        views_from=views_from,
        tab=visit.tab,
        error=error,
    )


def _write_views(
    lib: Library,
    visit: Visit,
    views: Views | None,
    main: WrittenRecord | None,
    reasons: list[str],
) -> list[tuple[str, str]]:
    """Screenshot, DOM and text as ``resource`` records and as files; returns the files."""
    if views is None:
        reasons.append("the page was left before it could be read (no DOM, text or screenshot)")
        return []
    if views.shot is None:
        reasons.append("no screenshot")
    concurrent = main.record_id if main else None
    taken = (views.shot, views.dom, views.facts.text)
    return write_views(lib, visit.writer, visit.folder, views.url, taken, concurrent=concurrent)


def _write_pageinfo(
    visit: Visit,
    views: Views | None,
    views_from: ViewsFrom,
    responses: list[WrittenRecord],
    main: WrittenRecord | None,
) -> None:
    pageinfo = {
        "url": visit.url,
        "final_url": views.url if views else visit.url,
        "title": views.facts.title if views else "",
        "views_from": views_from.value,
        "resources": [
            {"url": r.url, "status": r.status, "mime": r.mime, "type": r.record_type}
            for r in responses
        ],
    }
    visit.writer.write_metadata(
        f"urn:pageinfo:{visit.url}",
        "application/json",
        json.dumps(pageinfo, ensure_ascii=False).encode(),
        concurrent_to=main.record_id if main else None,
    )


def discard_visit(lib: Library, visit: Visit) -> None:
    """Remove the traces of a document request the browser never showed and that wrote
    nothing (a navigation cancelled by the next one): its empty WARC, folder and row."""
    if visit._writer is not None:
        visit.abandon()
        with contextlib.suppress(OSError):
            visit._writer.part_path.unlink()  # a .part WARC holding its warcinfo record only
            lib.abspath(visit.folder).rmdir()
    with contextlib.suppress(Exception):  # a row that was never written leaves nothing
        delete_pending(lib, visit.row.result())
