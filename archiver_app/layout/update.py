"""``archiver update``: bring every folder and row of a library into agreement.

In order: optionally import orphan folders, run one migrator pass (so new orphans and
registered sources reach the current layout), reconcile each snapshot with its
``index.json`` (DB wins conflicts; index rewritten from the DB), then merge exact
duplicates. Everything streams in batches of snapshot ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select

from archiver_app.layout.current import CURRENT_FS_VERSION
from archiver_app.layout.migrate import (
    finish_pending_cleanups,
    in_shared_import,
    write_snapshot_sidecar,
)
from archiver_app.layout.migrator import MigrationReport, run_migrator
from archiver_app.layout.orphans import OrphanReport, import_orphans
from archiver_app.layout.reconcile import duplicate_groups, merge_duplicate, reconcile_folder
from archiver_app.layout.sidecar import UnreadableIndex, read_index
from archiver_app.store.models import File, LocalState, Snapshot
from archiver_app.tasks import CancelToken, Progress, ProgressUpdate, null_progress

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from archiver_app.library import Library

BATCH = 500


@dataclass
class UpdateReport:
    orphans: OrphanReport | None = None
    migration: MigrationReport | None = None
    reconciled: int = 0
    rewritten: int = 0
    duplicates_merged: int = 0
    problems: list[str] = field(default_factory=list)


def update_library(
    library: Library,
    *,
    with_orphans: bool = False,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> UpdateReport:
    cancel = cancel or CancelToken()
    report = UpdateReport()
    if with_orphans:
        report.orphans = import_orphans(library, progress=progress, cancel=cancel)
    report.migration = run_migrator(library, progress=progress, cancel=cancel)
    after = 0
    root = library.root
    while True:
        cancel.raise_if_cancelled()
        with library.write() as s:
            snaps = s.scalars(
                select(Snapshot)
                .where(Snapshot.id > after, Snapshot.fs_version == CURRENT_FS_VERSION)
                .order_by(Snapshot.id)
                .limit(BATCH)
            ).all()
            for snap in snaps:
                if not snap.folder:
                    continue
                if in_shared_import(s, snap):  # its index.json is the import's, not the page's
                    write_snapshot_sidecar(s, snap, root)
                    continue
                folder = root.joinpath(*snap.folder.split("/"))
                if not folder.is_dir():
                    if not _offloaded(s, snap.id):  # offloaded: its folder went to the drives
                        report.problems.append(
                            f"snapshot {snap.uid}: folder {snap.folder} is missing"
                        )
                    continue
                try:
                    index = read_index(folder)
                except UnreadableIndex:
                    if not _offloaded(s, snap.id):  # offloaded: index.json is on the drives
                        write_snapshot_sidecar(s, snap, root)
                        report.rewritten += 1
                    continue
                if reconcile_folder(s, snap, index, root):
                    report.reconciled += 1
        if not snaps:
            break
        after = snaps[-1].id
        progress(ProgressUpdate(done=after, message="reconciling index.json files"))
    while True:
        cancel.raise_if_cancelled()
        with library.session() as s:
            groups = duplicate_groups(s)
        merged_now = 0
        for ids in groups:
            with library.write() as s:
                keeper = s.get(Snapshot, ids[0])
                for dup_id in ids[1:]:
                    dup = s.get(Snapshot, dup_id)
                    if keeper is None or dup is None:
                        continue
                    if (
                        keeper.fs_version != CURRENT_FS_VERSION
                        or dup.fs_version != keeper.fs_version
                    ):
                        report.problems.append(f"duplicates {ids}: not all at the current layout")
                        continue
                    merge_duplicate(s, keeper, dup, root)
                    merged_now += 1
            finish_pending_cleanups(library.write, root, rehash=False)
        report.duplicates_merged += merged_now
        if merged_now == 0:
            break
    return report


def _offloaded(s: Session, snapshot_id: int) -> bool:
    """Whether every file of the snapshot was offloaded to drives (none left here)."""
    states = set(s.scalars(select(File.local_state).where(File.snapshot_id == snapshot_id)))
    return states == {LocalState.OFFLOADED}
