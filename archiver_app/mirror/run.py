"""``archiver mirror``: lock the mounted drives, plan, then copy in parallel across drives.

Each mounted destination's lock is taken before planning, so ``ongoing`` rows left by a
dead run can be reset at once and a second run on the same drive skips it ("busy")
instead of writing beside the first. Once the plan is made, the locks of the drives it
neither writes to nor reads from are let go: those drives read "safe to unplug" while
the run copies to the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from archiver_app.jobs.pipeline import Pool
from archiver_app.library import Library
from archiver_app.mirror.copier import classify
from archiver_app.mirror.copy_states import prepare_destination
from archiver_app.mirror.destinations import (
    LibraryFolderMissing,
    MountedDestination,
    find_mounted,
    read_marker,
)
from archiver_app.mirror.director import Plan, plan_mirror
from archiver_app.mirror.locking import DestinationBusy, destination_lock, is_busy
from archiver_app.mirror.outcomes import DestinationOutcome, Stop, StopReason, describe_end
from archiver_app.mirror.policy import Policy, collection_policies, library_policy
from archiver_app.mirror.progress import RunProgress
from archiver_app.mirror.recheck import recheck_copies
from archiver_app.mirror.repair import RunContext
from archiver_app.mirror.worker import run_destination
from archiver_app.tasks import CancelToken, Progress, null_progress
from archiver_app.units import counted


@dataclass
class MirrorResult:
    plan: Plan
    dry_run: bool = False
    outcomes: list[DestinationOutcome] = field(default_factory=list)
    local_repaired: list[str] = field(default_factory=list)
    repaired_from: dict[str, str] = field(default_factory=dict)  # path -> drive label
    local_unrepairable: list[str] = field(default_factory=list)
    #: copies verified on a drive once and missing since (a reinstated drive's) found on it
    #: again before the plan, by drive label: good, counted present again; and corrupted
    found_again: dict[str, int] = field(default_factory=dict)
    found_corrupted: dict[str, int] = field(default_factory=dict)

    @property
    def copied(self) -> int:
        return sum(o.copied for o in self.outcomes)

    @property
    def failures(self) -> int:
        return sum(sum(o.failed.values()) for o in self.outcomes) + len(self.local_unrepairable)

    @property
    def units_planned(self) -> int | None:
        """The copies planned (the job's total; None for a dry run, which plans only)."""
        return None if self.dry_run else len(self.plan.transfers)

    @property
    def units_done(self) -> int:
        """The planned copies that ended well (made, already there, no longer needed): a
        run stopped by a full or pulled drive ends short of :attr:`units_planned`."""
        return sum(o.copied + o.adopted + o.skipped for o in self.outcomes)

    @property
    def ok(self) -> bool:
        """Every copy attempted was made (or was not needed any more), no drive stopped."""
        return not self.failures and not any(o.stopped for o in self.outcomes)

    @property
    def policy_holds(self) -> bool:
        """Whether every file has the copies its policy asks for after this run (for a dry
        run: would have, once the plan is copied). False whatever keeps a file short: a
        drive absent, busy, read-only, full or gone, no readable copy, a failed copy, a
        cancel."""
        plan = self.plan
        if plan.shortfall or plan.waiting_for or self.local_unrepairable:
            return False
        if self.dry_run:
            return True
        done = {o.label: o.copied + o.adopted + o.skipped for o in self.outcomes}
        return all(
            done.get(dp.destination.label, 0) == len(dp.transfers)
            for dp in plan.destinations.values()
        )

    @property
    def unmet(self) -> str | None:
        """Why ``archiver mirror`` exits 1, for the job's record; None when it exits 0."""
        return None if self.policy_holds else "the retention policy is not met"

    def describe(self) -> list[str]:
        """What the run did, as ``archiver mirror`` ends (and the job's log keeps)."""
        if self.dry_run:
            return ["dry run: nothing was copied", *self._policy_line()]
        return [*self.copy_lines(), *self._policy_line()]

    def copy_lines(self) -> list[str]:
        """What was copied per drive and why the rest was not (no policy verdict)."""
        lines = []
        for label, good in sorted(self.found_again.items()):
            line = f"  {label}: {counted(good, 'copy', 'copies')} still on it"
            line += ", checked and counted again"
            if bad := self.found_corrupted.get(label):
                line += f"; {bad} corrupted"
            lines.append(line)
        for label, bad in sorted(self.found_corrupted.items()):
            if label not in self.found_again:
                lines.append(f"  {label}: {bad} copies still on it are corrupted")
        planned = {
            dp.destination.label: len(dp.transfers) for dp in self.plan.destinations.values()
        }
        for o in self.outcomes:
            line = f"  {o.label}: {o.copied} copied"
            if o.adopted:
                line += f", {o.adopted} already there (verified)"
            if o.skipped:
                line += f", {o.skipped} no longer needed"
            for end, n in sorted(o.failed.items()):  # the stop's reason is said once, below
                same = o.stopped is not None and end == o.stopped.reason
                line += f", {n} failed" + ("" if same else f" ({describe_end(end)})")
            ended = o.copied + o.adopted + o.skipped + sum(o.failed.values())
            if planned.get(o.label, 0) > ended:  # a stop or a cancel came first
                line += f", {planned[o.label] - ended} not tried"
            if o.stopped:
                line += f"; stopped: {o.stopped.message}"
                if o.stopped.reason is StopReason.GONE:
                    line += f": plug {o.label} back in and mirror again to finish"
            lines.append(line)
        for path in self.local_repaired:
            source = self.repaired_from.get(path) or "a drive"
            lines.append(f"  repaired the laptop copy of {path} from {source}")
        for path in self.local_unrepairable:
            lines.append(f"  the laptop copy of {path} is corrupted and no good copy is mounted")
        return [*lines, f"done: {counted(self.copied, 'copy', 'copies')} made and verified"]

    def _policy_line(self) -> list[str]:
        return [f"{self.unmet} for every file (see the plan)"] if self.unmet else []


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
    offloading: Set[int] | None = None,
) -> MirrorResult:
    """Bring every file up to its retention policy on the drives mounted now.

    ``offloading``: only these files, each to the policy's number of copies on drives (the
    copies an offload needs before this computer lets go of them).

    ``progress`` gets an update at most every ``progress_interval`` seconds (0: after every
    buffer copied), from the copying threads.
    """
    cancel = cancel or CancelToken()
    default = library_policy(lib)
    policies = collection_policies(lib)
    mounted = find_mounted(lib, scan_roots=scan_roots)
    if dry_run:
        plan = _dry_plan(lib, mounted, policies, default, offloading)
        if on_plan:
            on_plan(plan)
        return MirrorResult(plan, dry_run=True)
    with ExitStack() as stack:
        locks = _DriveLocks(stack)
        locked, blocked, unusable = _lock_destinations(lib, mounted, locks, lock_wait)
        found = {
            d.label: recheck_copies(lib, d, default.parallelism, progress=progress, cancel=cancel)
            for d in locked.values()
        }
        plan = plan_mirror(
            lib,
            mounted,
            set(locked),
            policies,
            default,
            stale_ongoing=set(locked),
            blocked=blocked,
            offloading=offloading,
        )
        plan.busy = [mounted[i].label for i, why in blocked.items() if why is StopReason.BUSY]
        plan.unusable.update(unusable)
        # only the drives this run writes to or reads from stay busy; the others are
        # safe to unplug again (and free for another run) while it copies
        locks.keep_only(_drives_used(plan))
        if on_plan:
            on_plan(plan)
        tracker = RunProgress(
            progress, "mirror", len(plan.transfers), plan.total_bytes, interval=progress_interval
        )
        ctx = RunContext(lib, mounted, tracker, cancel)
        result = MirrorResult(
            plan,
            found_again={label: f.good for label, f in found.items() if f.good},
            found_corrupted={label: f.corrupted for label, f in found.items() if f.corrupted},
        )
        if plan.destinations:
            with Pool(len(plan.destinations), "mirror") as drives:  # a thread per drive
                result.outcomes = drives.map(
                    lambda dp: run_destination(
                        ctx, dp.destination, dp.transfers, default.batch_size, default.parallelism
                    ),
                    [dp for dp in plan.destinations.values() if dp.transfers],
                )
        tracker.finish()
        result.local_repaired, result.local_unrepairable = (
            ctx.local_repaired,
            ctx.local_unrepairable,
        )
        result.repaired_from = ctx.repaired_from
        return result


def _dry_plan(
    lib: Library,
    mounted: dict[int, MountedDestination],
    policies: dict[int, Policy],
    default: Policy,
    offloading: Set[int] | None,
) -> Plan:
    """The plan a dry run prints: busy drives (another process holds them) are left out."""
    busy = {i for i, d in mounted.items() if is_busy(d.mount)}
    free = set(mounted) - busy
    plan = plan_mirror(
        lib,
        mounted,
        free,
        policies,
        default,
        stale_ongoing=free,
        blocked=dict.fromkeys(busy, StopReason.BUSY),
        offloading=offloading,
    )
    plan.busy = sorted(mounted[i].label for i in busy)
    return plan


class _DriveLocks:
    """The drives' locks a run holds, each released on its own: at the latest when the
    run's ``stack`` closes, earlier for a drive the run turns out not to use."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._held: dict[int, ExitStack] = {}

    def take(self, did: int, dest: MountedDestination, wait: float) -> None:
        """Hold ``dest``'s lock (raises as :func:`destination_lock` does)."""
        one = ExitStack()
        one.enter_context(destination_lock(dest.mount, label=dest.label, wait=wait))
        self._held[did] = one
        self._stack.callback(one.close)

    def release(self, did: int) -> None:
        held = self._held.pop(did, None)
        if held is not None:
            held.close()

    def keep_only(self, used: Set[int]) -> None:
        for did in sorted(set(self._held) - set(used)):
            self.release(did)


def _drives_used(plan: Plan) -> set[int]:
    """The drives a run of ``plan`` writes to, and those it copies from."""
    used = {did for did, dp in plan.destinations.items() if dp.transfers}
    return used | {
        t.source_destination_id for t in plan.transfers if t.source_destination_id is not None
    }


def _lock_destinations(
    lib: Library, mounted: dict[int, MountedDestination], locks: _DriveLocks, lock_wait: float
) -> tuple[dict[int, MountedDestination], dict[int, StopReason], dict[str, Stop]]:
    """Take each mounted drive's lock (held until ``locks`` lets it go) and make it ready:
    the drives locked, why each other one cannot be written, and that as a :class:`Stop` by
    label for the plan (busy drives are listed apart). A drive that cannot be written is
    not held."""
    locked: dict[int, MountedDestination] = {}
    blocked: dict[int, StopReason] = {}
    unusable: dict[str, Stop] = {}
    for did, dest in sorted(mounted.items()):
        try:
            locks.take(did, dest, lock_wait)
            marker = read_marker(dest.mount)
            if marker is None or marker.uuid != dest.uuid:
                stop = Stop(StopReason.GONE if marker is None else StopReason.SWAPPED)
                unusable[dest.label], blocked[did] = stop, stop.reason
                locks.release(did)
                continue
            prepare_destination(lib, dest)
        except DestinationBusy:
            blocked[did] = StopReason.BUSY
            continue
        except LibraryFolderMissing as exc:
            unusable[dest.label], blocked[did] = exc.stop, exc.stop.reason
            locks.release(did)
            continue
        except OSError as exc:
            stop = Stop(StopReason(classify(exc).kind), exc.strerror or str(exc))
            unusable[dest.label], blocked[did] = stop, stop.reason
            locks.release(did)
            continue
        locked[did] = dest
    return locked, blocked, unusable
