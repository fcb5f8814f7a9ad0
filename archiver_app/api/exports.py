"""Exports for front ends (``lib.exports``): a selection of captures to a WACZ file or a
folder of WARCs, run as an export job in a child process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.export import ExportResult, Selection
from archiver_app.export.captured import CapturesNotAsCaptured
from archiver_app.export.signing import VerifyReport
from archiver_app.export.timestamps import StampCode
from archiver_app.jobs import JobKind
from archiver_app.jobs.operations import check_export, export_config
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress, null_progress

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "CapturesNotAsCaptured",
    "ExportResult",
    "ExportsManager",
    "Selection",
    "StampCode",
    "VerifyReport",
]


class ExportsManager:
    """``lib.exports``."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def default_authority(self) -> str | None:
        """The time-stamping authority a signed export asks by default, or None."""
        from archiver_app.export.pending import default_authority

        return default_authority(self._lib)

    def pending_timestamps(self) -> int:
        """How many signed exports wait for their timestamp (no network when made)."""
        from archiver_app.export.pending import pending

        return len(pending(self._lib))

    def verify(
        self,
        path: Path,
        *,
        tsa_roots: list[x509.Certificate] | None = None,
        key: str | None = None,
        sha256: str | None = None,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> VerifyReport:
        """A WACZ's files, signature and timestamp checked (``archiver verify-export``), and
        which of this library's edition releases it is, if any: a copy of one whose bytes
        differ is not intact as a file (:mod:`archiver_app.export.identity`)."""
        from archiver_app.editions.recorded import releases_on_record
        from archiver_app.export.signing import verify_wacz

        on_record = releases_on_record(self._lib)
        return verify_wacz(path, tsa_roots=tsa_roots, key=key, sha256=sha256,
                           releases=on_record, progress=progress, cancel=cancel)  # fmt: skip

    def check_destination(self, dest: Path, fmt: str) -> Path:
        """``dest`` made absolute, or ``InputError`` saying why it is not a safe place."""
        from archiver_app.export import check_destination

        return check_destination(self._lib, dest, fmt)

    def run(
        self,
        selection: Selection,
        dest: Path,
        *,
        fmt: str = "wacz",
        sign: bool = False,
        timestamp: str | None = None,
        keep_private_headers: bool = False,
        bibliography: bool = False,
        skip_altered: bool = False,
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> ExportResult:
        """Export ``selection`` to ``dest`` as one job; blocks until it ends (call it off
        the GUI thread); raises ``Cancelled`` when it was cancelled, and
        ``CapturesNotAsCaptured`` (nothing written) when a capture is not as captured,
        unless ``skip_altered`` leaves those out (named in the result's ``left_out``)."""
        from archiver_app.export.plan import check_selection

        check_selection(self._lib, selection)  # before the job: queueing one makes its collection
        config = export_config(
            dest,
            fmt=fmt,
            collection=selection.collection,
            tag=selection.tag,
            query=selection.query,
            snapshot_ids=selection.snapshot_ids,
            title=selection.title,
            sign=sign,
            timestamp=timestamp,
            keep_private_headers=keep_private_headers,
            bibliography=bibliography,
            skip_altered=skip_altered,
        )
        check_export(self._lib, config)  # a place it cannot write to: refused before any job
        result: ExportResult = self._lib.jobs.start(
            JobKind.EXPORT,
            config,
            name=f"Export to {dest.name}",
            collection=selection.collection or "default",
            progress=progress,
            cancel=cancel,
        )
        return result
