"""``archiver mirror``: lock the mounted drives, plan, then copy in parallel across drives.

Each mounted destination's lock is taken before planning, so ``ongoing`` rows left by a
dead run can be reset at once and a second run on the same drive skips it ("busy")
instead of writing beside the first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from archiver_app.library import Library
from archiver_app.mirror.destinations import MountedDestination, find_mounted, read_marker
from archiver_app.mirror.director import Plan, plan_mirror
from archiver_app.mirror.locking import DestinationBusy, destination_lock, is_busy
from archiver_app.mirror.policy import collection_policies, library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.worker import (
    DestinationOutcome,
    RunContext,
    prepare_destination,
    run_destination,
)
from archiver_app.tasks import CancelToken, Progress, null_progress


@dataclass
class MirrorResult:
    plan: Plan
    dry_run: bool = False
    outcomes: list[DestinationOutcome] = field(default_factory=list)
    local_repaired: list[str] = field(default_factory=list)
    local_unrepairable: list[str] = field(default_factory=list)

    @property
    def copied(self) -> int:
        return sum(o.copied for o in self.outcomes)

    @property
    def failures(self) -> int:
        return sum(sum(o.failed.values()) for o in self.outcomes) + len(self.local_unrepairable)

    @property
    def ok(self) -> bool:
        return not self.failures and not any(o.stopped for o in self.outcomes)

    def describe(self) -> list[str]:
        if self.dry_run:
            return ["dry run: nothing was copied"]
        lines = []
        for o in self.outcomes:
            line = f"  {o.label}: {o.copied} copied"
            if o.adopted:
                line += f", {o.adopted} already there (verified)"
            if o.skipped:
                line += f", {o.skipped} no longer needed"
            for reason, n in sorted(o.failed.items()):
                line += f", {n} failed ({reason})"
            if o.stopped:
                line += f"; stopped: {o.stopped}"
            lines.append(line)
        for path in self.local_repaired:
            lines.append(f"  repaired the laptop copy of {path} from a drive")
        for path in self.local_unrepairable:
            lines.append(f"  the laptop copy of {path} is corrupted and no good copy is mounted")
        return lines


def run_mirror(
    lib: Library,
    *,
    dry_run: bool = False,
    scan_roots: Sequence[Path] | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
    lock_wait: float = 0.0,
    on_plan: Callable[[Plan], None] | None = None,
    progress_interval: float = 0.05,
) -> MirrorResult:
    """Bring every file up to its retention policy on the drives mounted now.

    ``progress`` gets an update at most every ``progress_interval`` seconds (0: after every
    buffer copied), from the copying threads.
    """
    cancel = cancel or CancelToken()
    default = library_policy(lib)
    policies = collection_policies(lib)
    mounted = find_mounted(lib, scan_roots=scan_roots)
    if dry_run:
        busy = {i for i, d in mounted.items() if is_busy(d.mount)}
        plan = plan_mirror(
            lib, mounted, set(mounted) - busy, policies, default, stale_ongoing=set(mounted) - busy
        )
        plan.busy = sorted(mounted[i].label for i in busy)
        if on_plan:
            on_plan(plan)
        return MirrorResult(plan, dry_run=True)
    with ExitStack() as stack:
        locked: dict[int, MountedDestination] = {}
        busy_labels: list[str] = []
        unusable: dict[str, str] = {}
        for did, dest in sorted(mounted.items()):
            try:
                stack.enter_context(destination_lock(dest.mount, label=dest.label, wait=lock_wait))
                marker = read_marker(dest.mount)
                if marker is None or marker.uuid != dest.uuid:
                    unusable[dest.label] = "gone"
                    continue
                prepare_destination(lib, dest)
            except DestinationBusy:
                busy_labels.append(dest.label)
                continue
            except OSError as exc:
                unusable[dest.label] = exc.strerror or str(exc)
                continue
            locked[did] = dest
        plan = plan_mirror(lib, mounted, set(locked), policies, default, stale_ongoing=set(locked))
        plan.busy = busy_labels
        plan.unusable.update(unusable)
        if on_plan:
            on_plan(plan)
        tracker = RunProgress(
            progress, "mirror", len(plan.transfers), plan.total_bytes, interval=progress_interval
        )
        ctx = RunContext(lib, mounted, tracker, cancel)
        result = MirrorResult(plan)
        if plan.destinations:
            with ThreadPoolExecutor(len(plan.destinations), thread_name_prefix="mirror") as ex:
                futures = [
                    ex.submit(
                        run_destination,
                        ctx,
                        dp.destination,
                        dp.transfers,
                        default.batch_size,
                        default.parallelism,
                    )
                    for dp in plan.destinations.values()
                    if dp.transfers
                ]
                result.outcomes = [f.result() for f in futures]
        tracker.finish()
        result.local_repaired, result.local_unrepairable = (
            ctx.local_repaired,
            ctx.local_unrepairable,
        )
        return result
