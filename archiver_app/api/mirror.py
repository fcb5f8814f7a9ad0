"""Copies on drives for front ends (``lib.mirror``): mirror, verify, offload, policy.

Each long operation runs as a job in a child process (``lib.jobs``), so the Jobs panel and
``archiver jobs`` show it; figures for the drives panel come from ``lib.drives``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from archiver_app.api.changes import Changes
from archiver_app.jobs import JobKind
from archiver_app.jobs.operations import mirror_config, offload_config, verify_config
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress, null_progress

if TYPE_CHECKING:  # the mirror engine loads when a mirror runs, not with the window
    from archiver_app.mirror.offload import OffloadResult
    from archiver_app.mirror.policy import Policy
    from archiver_app.mirror.run import MirrorResult
    from archiver_app.mirror.scrub import ScrubResult

__all__ = ["MirrorManager", "MirrorResult", "OffloadResult", "Policy", "ScrubResult"]


class MirrorManager:
    """``lib.mirror``. The job calls block until the job ends (call them off the GUI
    thread); they raise ``Cancelled`` when it was cancelled."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    def run(
        self,
        *,
        name: str = "Mirroring",
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> MirrorResult:
        """Copy what the retention policy asks for to the mounted drives."""
        result: MirrorResult = self._lib.jobs.start(
            JobKind.MIRROR, mirror_config(), name=name, progress=progress, cancel=cancel
        )
        return result

    def verify_all(
        self,
        *,
        name: str = "Verifying copies",
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> list[ScrubResult]:
        """Re-read this computer's copies, then every mounted drive's; repair from good."""
        config = verify_config(everything=True)
        results: list[ScrubResult] = self._lib.jobs.start(
            JobKind.VERIFY, config, name=name, progress=progress, cancel=cancel
        )
        return results

    def scheduled_scrub(
        self, *, progress: Progress = null_progress, cancel: CancelToken | None = None
    ) -> list[ScrubResult]:
        """Verify the copies whose re-verify interval has passed (what the app does idle)."""
        results: list[ScrubResult] = self._lib.jobs.start(
            JobKind.VERIFY,
            verify_config(scheduled=True),
            name="Scheduled verification of copies",
            progress=progress,
            cancel=cancel,
        )
        return results

    def scrubs_due(self) -> list[str]:
        """Labels of the copy sets (this computer's, each mounted drive's) due a re-read."""
        from archiver_app.mirror import scrubs_due

        return scrubs_due(self._lib)

    def offload(
        self,
        older_than: timedelta,
        *,
        name: str = "Freeing laptop space",
        progress: Progress = null_progress,
        cancel: CancelToken | None = None,
    ) -> OffloadResult:
        """Free the laptop copies older than ``older_than`` that enough drives hold."""
        result: OffloadResult = self._lib.jobs.start(
            JobKind.OFFLOAD, offload_config(older_than), name=name, progress=progress, cancel=cancel
        )
        return result

    def add_destination(self, folder: str | Path, label: str) -> Changes:
        """Mark ``folder`` (a drive or a folder on one) as a destination named ``label``."""
        from archiver_app.mirror import add_destination

        add_destination(self._lib, folder, label)
        return Changes(drives=True)

    def policy(self) -> Policy:
        """The library's retention policy (copies wanted, on which drives)."""
        from archiver_app.mirror.policy import library_policy

        return library_policy(self._lib)

    def set_copies(self, copies: int) -> Changes:
        """Keep ``copies`` verified copies of every file (the policy's other fields stay)."""
        from archiver_app.mirror.policy import set_policy

        set_policy(self._lib, copies=copies)
        return Changes(drives=True, settings=True)
