"""Bringing archives in, for front ends (``lib.imports``): WARC/ARC/WACZ files as import
jobs, ArchiveBox data folders registered for the background migration, and that migration
(old folder layouts and registered folders), run as a job while the app is idle."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from archiver_app.importers.outcome import ImportReport
from archiver_app.jobs import JobKind
from archiver_app.jobs.operations import import_config, migrate_config
from archiver_app.layout.migrator import MigrationReport
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress, null_progress

__all__ = ["ImportReport", "ImportsManager", "MigrationReport"]


class ImportsManager:
    """``lib.imports``. :meth:`run` and :meth:`migrate` block until their job ends (call
    them off the GUI thread); they raise ``Cancelled`` when it was cancelled."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def run(
        self,
        paths: Sequence[Path],
        *,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> ImportReport:
        """Import WARC, ARC and WACZ files (or folders of them) as one job."""
        more = f" (+{len(paths) - 1})" if len(paths) > 1 else ""
        report: ImportReport = self._lib.jobs.start(
            JobKind.IMPORT,
            import_config(paths),
            name=f"Import of {paths[0].name}{more}",
            progress=progress,
            cancel=cancel,
        )
        return report

    def register_archivebox(self, folder: Path) -> None:
        """Note an ArchiveBox data folder (O(1)); :meth:`migrate` imports its snapshots."""
        from archiver_app.layout.archivebox import register_archivebox

        register_archivebox(self._lib, folder)

    def pending(self) -> int:
        """Snapshots at an old layout plus registered folders not yet imported, plus the
        indexes an older library has yet to build (:mod:`archiver_app.store.indexes`)."""
        from archiver_app.layout.migrator import pending_count, pending_sources
        from archiver_app.store.indexes import missing_indexes

        with self._lib.engine.connect() as conn:
            indexes = len(missing_indexes(conn))
        return pending_count(self._lib) + len(pending_sources(self._lib)) + indexes

    def migrate(
        self, *, progress: Progress = null_progress, cancel: CancelToken | None = None
    ) -> MigrationReport:
        """One pass over what :meth:`pending` counts, as a migrate job. Cancelled, it
        stops at a batch boundary and reports so (``report.cancelled``)."""
        report: MigrationReport = self._lib.jobs.start(
            JobKind.MIGRATE,
            migrate_config(),
            name="Upgrading folders",
            progress=progress,
            cancel=cancel,
        )
        return report
