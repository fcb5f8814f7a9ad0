"""Pages a worker held when it gave up on the database: noted in the library's folder.

A worker whose database stays unreachable for ``--reconnect-for`` ends (exit status 75)
holding pages it could not record (:class:`archiver_app.crawl.unrecorded.Unrecorded`).
Left to their leases, those pages came back as ``lost`` attempts once the database
answered: counted, though nothing about them failed (a page with one attempt was failed
for good). So the worker writes them, as it ends, to a note in the library's folder
(``.archiver-unrecorded/<worker>.json``: the folder every machine of a shared library
mounts, which stays when the database goes). Whoever reaches the database next (a worker's
heartbeat, before it counts lapsed leases; any worker before it picks a job; the jobs
list) takes the note (its first reader removes it) and settles each page as the worker
would have (:func:`archiver_app.crawl.unrecorded.settle`): a capture its folder completes
is recorded, anything else goes back to the queue with its attempt given back and its
pending capture shown failed. A page no longer that worker's claim is left alone.

A note that cannot be written (the folder went too, or the library was moved away from
under the worker) leaves the pages to their leases; the library's folder is never made
anew for it. Notes are files of the library's folder: ``archiver move-library`` takes them
along, and they are settled at the new place.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.jobs import JobNotFoundError, load_context
from archiver_app.crawl.queue import ClaimedPage
from archiver_app.crawl.unrecorded import Unrecorded, record_result, settle
from archiver_app.durable import atomic_write_text, is_temp, make_folders
from archiver_app.library import Library
from archiver_app.store.connection_loss import lost_connection

log = logging.getLogger(__name__)

#: The folder of the notes, in the library's folder.
NOTES_DIR = ".archiver-unrecorded"


def _note_path(lib: Library, worker_id: str) -> Path:
    return lib.root / NOTES_DIR / (re.sub(r"[^A-Za-z0-9._-]", "_", worker_id) + ".json")


def note_given_up(lib: Library, worker_id: str, items: list[Unrecorded]) -> bool:
    """Note ``items``, the pages worker ``worker_id`` holds as it gives up; False when the
    note could not be written (they are left to their leases)."""
    if not items:
        return True
    entries = [
        {
            "page": asdict(item.page),
            "reason": item.reason,
            "saved": item.saved,
            "result": None if item.result is None else asdict(item.result),
        }
        for item in items
    ]
    text = json.dumps({"worker": worker_id, "pages": entries}, indent=1) + "\n"
    path = _note_path(lib, worker_id)
    try:  # its folder, in the library's folder only: one moved away is not made again
        make_folders(path.parent, within=lib.root)
        atomic_write_text(path, text)
    except OSError:
        log.warning("noting the pages of worker %s failed", worker_id, exc_info=True)
        return False
    return True


def settle_given_up(lib: Library) -> int:
    """Settle the pages of every note in the library's folder; how many were settled.
    Raises while the database is unreachable (the note is written back with what is left)."""
    try:
        notes = sorted(
            p
            for p in (lib.root / NOTES_DIR).iterdir()
            if p.suffix == ".json" and not is_temp(p.name)
        )
    except OSError:  # no note yet (or no folder): nothing to do
        return 0
    settled = 0
    for path in notes:
        try:
            raw = path.read_text(encoding="utf-8")
            path.unlink()  # this reader takes the note; a second one finds it gone
        except OSError:
            continue
        entries = _entries(raw, path)
        try:
            while entries:
                try:
                    _settle_entry(lib, entries[0])
                    settled += 1
                except Exception as exc:
                    if lost_connection(exc):
                        raise
                    log.exception("settling a page of the note %s failed; left to its lease", path)
                entries.pop(0)
        finally:
            if entries:  # the database went away again: kept for the next reader
                text = json.dumps({"pages": entries}, indent=1) + "\n"
                try:
                    atomic_write_text(path, text)
                except OSError:
                    log.warning("writing back the note %s failed", path, exc_info=True)
    return settled


def _entries(raw: str, path: Path) -> list[dict[str, Any]]:
    try:
        pages = json.loads(raw)["pages"]
        return [entry for entry in pages if isinstance(entry, dict)]
    except (ValueError, KeyError, TypeError):
        log.warning("the note %s is unreadable; its pages are left to their leases", path)
        return []


def _settle_entry(lib: Library, entry: dict[str, Any]) -> None:
    page = ClaimedPage(**entry["page"])
    try:
        with lib.session() as s:
            ctx = load_context(s, page.job_id)
    except JobNotFoundError:  # the job was deleted meanwhile
        return
    result = entry.get("result")
    item = Unrecorded(
        ctx,
        page,
        str(entry["reason"]),
        None if result is None else FetchResult(**result),
        bool(entry.get("saved")),
    )
    settle(lib, item, lambda c, p, r: record_result(lib, c, p, r))
