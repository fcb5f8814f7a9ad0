"""Faults with real folders and real mounts: nothing is ever marked present unverified.

Drives vanish (unplugged = the folder moves away; destroyed = removed; a real tmpfs lazily
unmounted) between files and in the middle of a file, fill up, are read-only; two runs
share a drive. Every test ends by checking the drive: every file under a final name has
the recorded bytes, every copy marked present is there.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.mirror import (
    add_destination,
    copier,
    run_mirror,
    set_policy,
    verify_destinations,
)
from archiver_app.mirror.outcomes import Shortfall, Stop, StopReason
from archiver_app.mirror.run import MirrorResult
from archiver_app.store.models import CopyState, Destination, Job, JobLog
from archiver_app.tasks import CancelToken, ProgressUpdate
from tests.helpers.mirror_data import check_drive, copy_states, make_snapshot, present_ids
from tests.helpers.mounts import read_only_folder, small_drive


def _stopped(result: MirrorResult) -> StopReason | None:
    stop = result.outcomes[0].stopped
    return None if stop is None else stop.reason


SIZES = [3_000_000] + [20_000] * 11  # the big file first: "mid-file" lands in it


def final_files(mount: Path, library: Library) -> dict[str, str]:
    folder = mount / "Archiver" / library.id
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and ".archiver-staging" not in p.parts
    }


@pytest.mark.parametrize("moment", ["between files", "mid-file"])
def test_drive_unplugged_then_plugged_back(library: Library, tmp_path: Path, moment: str) -> None:
    snap = make_snapshot(library, list(reversed(SIZES)) if moment == "between files" else SIZES)
    drive, away = tmp_path / "usb", tmp_path / "usb-unplugged"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, batch_size=4, parallelism=1)
    fired = threading.Event()

    def unplug(update: ProgressUpdate) -> None:
        hit = update.done >= 5 if moment == "between files" else update.bytes_done > 1_500_000
        if hit and not fired.is_set():
            fired.set()
            drive.rename(away)

    result = run_mirror(library, progress=unplug, progress_interval=0)
    assert fired.is_set() and not result.ok
    [outcome] = result.outcomes
    assert outcome.stopped is not None and outcome.stopped.reason is StopReason.GONE
    [said] = [line for line in result.describe() if line.startswith("  usb: ")]
    assert said.endswith(": plug usb back in and mirror again to finish")
    assert said.count("the drive is gone") == 1  # not once per failed copy and once more
    # every file meant for the drive is accounted for (it said "0 copied, 2 failed" of 12)
    counts = [int(part.split()[0]) for part in said.split(": ", 1)[1].split("; ")[0].split(", ")]
    assert sum(counts) == len(result.plan.destinations[dest].transfers), said
    present = present_ids(library, dest)
    assert len(present) < len(snap.file_ids)
    away.rename(drive)  # plugged back in
    assert check_drive(library, drive, dest) == []
    assert set(final_files(drive, library)) >= {snap.paths[snap.file_ids.index(f)] for f in present}
    again = run_mirror(library)
    assert again.ok and present_ids(library, dest) == set(snap.file_ids)
    assert check_drive(library, drive, dest) == []
    staging = drive / "Archiver" / library.id / ".archiver-staging"
    assert list(staging.iterdir()) == []


def test_drive_destroyed_mid_run(library: Library, tmp_path: Path) -> None:
    snap = make_snapshot(library, list(reversed(SIZES)))
    drive = tmp_path / "usb"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, batch_size=3, parallelism=2)
    seen: dict[str, str] = {}
    once = threading.Lock()  # progress comes from several copying threads at once

    def destroy(update: ProgressUpdate) -> None:
        with once:
            if update.done >= 4 and not seen and drive.exists():
                seen.update(final_files(drive, library))
                # Gone at once, as a pulled drive: a copy thread may still be creating a
                # file inside, which would make a removal in place fail half-way.
                pulled = drive.with_name("usb-pulled")
                drive.rename(pulled)
                shutil.rmtree(pulled, ignore_errors=True)

    result = run_mirror(library, progress=destroy, progress_interval=0)
    assert not result.ok and _stopped(result) is StopReason.GONE
    present = present_ids(library, dest)
    by_id = dict(zip(snap.file_ids, snap.paths, strict=True))
    assert {by_id[f] for f in present} <= set(seen)  # only what was verified on the drive
    assert run_mirror(library).plan.waiting_for == {"usb": len(snap.file_ids) - len(present)}


def test_another_drive_mounted_at_the_same_path_mid_run(library: Library, tmp_path: Path) -> None:
    """Drive A is pulled out and drive B, another destination of this library, is mounted
    at the same path (auto-mount by volume name): nothing written to B counts for A."""
    make_snapshot(library, [20_000] * 24, seed=9)
    mount, elsewhere = tmp_path / "media-USB", tmp_path / "b"
    mount.mkdir()
    elsewhere.mkdir()
    a = add_destination(library, mount, "A").id
    b = add_destination(library, elsewhere, "B").id
    (elsewhere / "Archiver" / library.id / ".archiver-staging").mkdir(parents=True)
    elsewhere.rename(tmp_path / "b-unplugged")  # B is not mounted when the run starts
    set_policy(library, batch_size=4, parallelism=1, copies=2)
    swapped = threading.Event()

    def swap(update: ProgressUpdate) -> None:
        if update.done >= 6 and not swapped.is_set():
            swapped.set()
            mount.rename(tmp_path / "a-unplugged")
            (tmp_path / "b-unplugged").rename(mount)

    result = run_mirror(library, progress=swap, progress_interval=0)
    assert swapped.is_set()
    assert not result.ok and _stopped(result) is StopReason.GONE
    assert present_ids(library, b) == set()
    mount.rename(tmp_path / "b-back")
    (tmp_path / "a-unplugged").rename(mount)
    assert check_drive(library, mount, a) == []
    assert len(present_ids(library, a)) < 24


@pytest.mark.parametrize("how", ["unplugged", "another drive mounted there"])
def test_drive_pulled_mid_scrub(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A scrub that loses its drive stops: the copies it had not checked are neither
    missing nor corrupted, and the drive is not counted as verified."""
    snap = make_snapshot(library, [20_000] * 12, seed=5)
    drive = tmp_path / "usb"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, parallelism=1)
    assert run_mirror(library).ok
    other = tmp_path / "other"
    other.mkdir()
    other_id = add_destination(library, other, "other").id
    real_matches = copier.matches
    calls = 0

    def pull_after_four(path: str | Path, sha256: str, size: int, **kw: bool) -> bool:
        nonlocal calls
        good = real_matches(path, sha256, size, **kw)
        calls += 1
        if calls == 4:
            drive.rename(tmp_path / "usb-pulled")
            if how != "unplugged":
                other.rename(drive)
        return good

    monkeypatch.setattr(copier, "matches", pull_after_four)
    [result] = verify_destinations(library, "usb")
    assert copy_states(library, dest) == dict.fromkeys(snap.file_ids, CopyState.PRESENT)
    assert (result.checked, result.ok, result.lost, result.corrupted) == (4, 4, [], [])
    assert result.stopped is not None and result.stopped.reason is StopReason.GONE
    assert "8 copies were not checked" in result.describe()
    assert copy_states(library, other_id) == {}
    with library.session() as s:
        assert s.get(Destination, dest).last_scrub_at is None  # type: ignore[union-attr]
    monkeypatch.setattr(copier, "matches", real_matches)
    if how != "unplugged":
        drive.rename(other)
    (tmp_path / "usb-pulled").rename(drive)  # plugged back in
    [again] = verify_destinations(library, "usb")
    assert (again.checked, again.ok, again.stopped) == (12, 12, None)
    with library.session() as s:
        assert s.get(Destination, dest).last_scrub_at is not None  # type: ignore[union-attr]


def test_real_unmount_mid_copy(library: Library, tmp_path: Path) -> None:
    snap = make_snapshot(library, SIZES)
    mount = tmp_path / "tmpfs"
    with small_drive(mount, 64 * 1024):
        dest = add_destination(library, mount, "stick").id
        set_policy(library, batch_size=4, parallelism=1)
        seen: dict[str, str] = {}

        def pull(update: ProgressUpdate) -> None:
            if update.bytes_done > 1_000_000 and not seen:
                seen.update(final_files(mount, library) or {"": ""})
                subprocess.run(["umount", "-l", str(mount)], check=True)

        result = run_mirror(library, progress=pull, progress_interval=0)
    assert seen and not result.ok
    assert present_ids(library, dest) == set()  # the first batch never completed
    # the first batch was claimed, then given back; so was the next one if it was claimed
    # (ahead of its turn) before the drive went
    states = copy_states(library, dest)
    assert len(states) in (4, 8) and set(states.values()) == {"missing"}
    assert set(states) <= set(snap.file_ids)


def test_drive_fills_up(library: Library, tmp_path: Path) -> None:
    make_snapshot(library, [150_000] * 12, seed=3)
    mount = tmp_path / "small"
    with small_drive(mount, 1024):
        dest = add_destination(library, mount, "small").id
        set_policy(library, batch_size=3, parallelism=2)
        dry = run_mirror(library, dry_run=True).plan
        planned = len(dry.transfers)
        assert 0 < planned < 12 and dry.shortfall == {Shortfall.NO_ROOM: 12 - planned}
        # something else fills the drive after the plan was made: ENOSPC mid-copy
        filler = mount / "someone-elses-file"

        def fill(_plan: object) -> None:
            with filler.open("wb") as fh:
                fh.write(b"\0" * 600_000)

        result = run_mirror(library, on_plan=fill)
        assert not result.ok and _stopped(result) is StopReason.FULL
        assert not result.policy_holds
        assert check_drive(library, mount, dest) == []
        got = len(present_ids(library, dest))
        assert got < planned
        filler.unlink()
        run_mirror(library)  # room again: what fits now gets copied
        assert len(present_ids(library, dest)) > got
        assert check_drive(library, mount, dest) == []
        assert list((mount / "Archiver" / library.id / ".archiver-staging").iterdir()) == []


def test_read_only_destination(library: Library, tmp_path: Path) -> None:
    """A read-only drive is named as read-only (never "no room left"), before the run
    (the plan) and by it, and the run says the policy is not met."""
    snap = make_snapshot(library, [1000, 2000], seed=4)
    drive = tmp_path / "ro"
    drive.mkdir()
    dest = add_destination(library, drive, "ro").id
    with read_only_folder(drive):
        dry = run_mirror(library, dry_run=True)
        result = run_mirror(library)
        for plan in (dry.plan, result.plan):
            assert plan.transfers == []
            assert plan.unusable["ro"].reason is StopReason.READ_ONLY
            assert plan.shortfall == {StopReason.READ_ONLY: 2}
            text = "\n".join(plan.describe())
            assert "ro: cannot be written: the drive is read-only" in text
            assert "2 files stay below their policy: a drive it needs cannot be written: " in text
            assert "room" not in text
        assert not dry.policy_holds and not result.policy_holds
        [checked] = verify_destinations(library, "ro")  # checked (nothing there), not refused
        assert checked.unwritable is not None and checked.stopped is None
    assert copy_states(library, dest) == {}
    again = run_mirror(library)
    assert again.ok and again.policy_holds and present_ids(library, dest) == set(snap.file_ids)


def test_two_runs_on_one_drive(library: Library, tmp_path: Path) -> None:
    snap = make_snapshot(library, [200_000] * 6 + [5000] * 20, seed=5)
    drive = tmp_path / "usb"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, batch_size=5, parallelism=2)
    second: list[MirrorResult] = []

    def start_second(update: ProgressUpdate) -> None:
        if not second:  # while the first run is writing, start another on the same drive
            second.append(run_mirror(library))

    first = run_mirror(library, progress=start_second, progress_interval=0)
    assert second[0].plan.busy == ["usb"] and second[0].plan.transfers == []
    assert first.ok and present_ids(library, dest) == set(snap.file_ids)
    assert check_drive(library, drive, dest) == []
    # and two separate processes at once
    make_snapshot(library, [100_000] * 10, seed=6, name="more")
    cmd = [sys.executable, "-m", "archiver_app", "--library", str(library.root), "mirror"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    # one run copies; the other either found nothing left to do (0) or found the drive
    # busy, which leaves the policy unmet as far as that run knows (1, and it says why)
    codes = sorted(p.returncode for p in procs)
    assert codes in ([0, 0], [0, 1]), outs
    for p, (out, _) in zip(procs, outs, strict=True):
        if p.returncode == 1:
            assert "usb: busy" in out and "another mirror or scrub is writing to it" in out
    assert check_drive(library, drive, dest) == []
    assert len(present_ids(library, dest)) == 36


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_permission_denied_on_the_drive(tmp_path: Path) -> None:
    """A run as an ordinary user (uid 65534) on a drive whose folders root owns: the
    temporary files can be written, the final folders cannot (a real EACCES)."""
    base = Path(tempfile.mkdtemp(prefix="mirror-perm-"))
    try:
        base.chmod(0o755)
        lib = Library.open(base / "lib")
        snap = make_snapshot(lib, [5000, 7000], seed=7)
        drive = base / "usb"
        drive.mkdir()
        dest = add_destination(lib, drive, "usb").id
        lib.close()
        subprocess.run(["chown", "-R", "65534:65534", str(base / "lib")], check=True)
        folder = drive / "Archiver" / lib.id
        (folder / ".archiver-staging").mkdir()
        (folder / ".archiver-staging").chmod(0o777)
        (folder / "collections").mkdir()  # root's, 0755: not writable by the run
        lock = drive / "Archiver" / ".archiver-lock"
        lock.touch()
        lock.chmod(0o666)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                with Library.open(base / "lib", create=False) as child_lib:
                    res = run_mirror(child_lib)
                    stopped = res.outcomes[0].stopped if res.outcomes else None
                os._exit(3 if stopped and stopped.reason is StopReason.PERMISSION else 4)
            except BaseException:
                os._exit(5)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 3
        with Library.open(base / "lib", create=False) as lib:
            assert present_ids(lib, dest) == set()
            assert not list((folder / "collections").rglob("*.bin"))
            assert list((folder / ".archiver-staging").iterdir()) == []
            assert run_mirror(lib).ok  # as root now: it goes through
            assert present_ids(lib, dest) == set(snap.file_ids)
            assert check_drive(lib, drive, dest) == []
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.mark.parametrize("why", ["read-only", "full", "absent", "cancelled"])
def test_mirror_exit_code_says_whether_the_policy_holds(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str], why: str
) -> None:
    """``archiver mirror`` exits 1 for every reason the policy is left unmet, and its
    output names the reason; 0 once it holds."""
    from archiver_app.cli import main

    make_snapshot(library, [120_000] * 3, seed=12)  # two fit on the small drive
    drive = tmp_path / "usb"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    cmd = ["--library", str(library.root), "mirror"]
    with contextlib.ExitStack() as stack:
        if why == "read-only":
            stack.enter_context(read_only_folder(drive))
        elif why == "full":
            mount = tmp_path / "small"
            stack.enter_context(small_drive(mount, 256))
            add_destination(library, mount, "small")
            set_policy(library, destinations=["small"])
        elif why == "absent":
            drive.rename(tmp_path / "away")
            stack.callback(lambda: (tmp_path / "away").rename(drive))
        else:
            cancel = CancelToken()
            cancel.cancel()
            result = run_mirror(library, cancel=cancel)
            assert result.outcomes[0].stopped == Stop(StopReason.CANCELLED)
            assert not result.policy_holds and "stopped: cancelled" in "\n".join(result.describe())
        code = main(cmd) if why != "cancelled" else (0 if result.policy_holds else 1)
        out = capsys.readouterr().out
        assert code == 1, out
        expected = {
            "read-only": "the drive is read-only",
            "full": "no room left on the mounted drives",
            "absent": "usb: not mounted; 3 files wait for it",
            "cancelled": "",
        }[why]
        assert expected in out
        if why != "cancelled":
            assert "the retention policy is not met" in out
            # the job agrees with the command: completed, and its last line says so (it
            # said "completed" or "completed; N failed" beside an exit status of 1)
            with library.session() as s:
                job = s.scalars(select(Job).order_by(Job.id.desc())).first()
                assert job is not None and job.status == "completed"
                last = s.scalars(
                    select(JobLog.message).where(JobLog.job_id == job.id).order_by(JobLog.id.desc())
                ).first()
            assert last is not None and last.startswith("completed; ")
            assert last.endswith("the retention policy is not met (see above)"), last
    set_policy(library, destinations=["usb"])
    assert main(cmd) == 0
    assert len(present_ids(library, dest)) == 3
    # the job's log keeps what the run said (the Jobs panel and `archiver job` show it)
    with library.session() as s:
        job = s.scalars(select(Job).order_by(Job.id.desc())).first()
        assert job is not None
        said = list(s.scalars(select(JobLog.message).where(JobLog.job_id == job.id)))
    assert said[-2:] == ["done: 3 copies made and verified", "completed"]


def test_copies_a_pulled_drive_could_not_read_back_are_the_drive_gone(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drive goes while a batch is read back: those copies failed because the drive
    went away. The line said "2 failed (did not read back correctly)", as if the copies
    were bad, beside "stopped: the drive is gone"."""
    big = 300_000  # read back one by one (``copier.matches``)
    make_snapshot(library, [big] * 6, seed=22)
    drive, away = tmp_path / "usb", tmp_path / "usb-pulled"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, batch_size=2, parallelism=1)
    real_matches = copier.matches

    def pull_then_read_back(path: str | Path, sha256: str, size: int, **kw: bool) -> bool:
        if drive.exists():
            drive.rename(away)
        return real_matches(path, sha256, size, **kw)

    monkeypatch.setattr(copier, "matches", pull_then_read_back)
    result = run_mirror(library)
    [outcome] = result.outcomes
    assert outcome.stopped is not None and outcome.stopped.reason is StopReason.GONE
    assert outcome.copied == 0 and set(outcome.failed) == {StopReason.GONE}, outcome.failed
    [said] = [line for line in result.describe() if line.startswith("  usb: ")]
    assert "read back" not in said, said
    # every file meant for the drive is accounted for: failed, or not tried
    counts = [int(part.split()[0]) for part in said.split(": ", 1)[1].split("; ")[0].split(", ")]
    assert sum(counts) == len(result.plan.destinations[dest].transfers), said


@pytest.mark.parametrize("run", ["mirror", "scrub repair"])
def test_a_drive_pulled_after_its_copies_read_back_is_not_re_created(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str
) -> None:
    """The drive goes between a batch's read-back and its renames: nothing is written at
    its old path (on a real system, the system disk under the unmounted mount point),
    not even the folders its copies would have gone in."""
    big = 300_000  # read back one by one (``copier.matches``), not in groups
    snap = make_snapshot(library, [big] * 6, seed=21)
    drive, away = tmp_path / "usb", tmp_path / "usb-pulled"
    drive.mkdir()
    dest = add_destination(library, drive, "usb").id
    set_policy(library, batch_size=2, parallelism=1)
    if run == "scrub repair":
        assert run_mirror(library).ok
        folder = drive / "Archiver" / library.id
        shutil.rmtree(folder / "collections")  # every copy lost: the repair writes them all
    real_matches = copier.matches
    calls = 0
    pull_at = 3 if run == "mirror" else 6 + 1  # the scrub's check reads the 6 first

    def pull_after_read_back(path: str | Path, sha256: str, size: int, **kw: bool) -> bool:
        nonlocal calls
        good = real_matches(path, sha256, size, **kw)
        calls += 1
        if calls == pull_at:
            drive.rename(away)
        return good

    monkeypatch.setattr(copier, "matches", pull_after_read_back)
    if run == "mirror":
        seen: list[ProgressUpdate] = []
        result = run_mirror(library, progress=seen.append, progress_interval=0)
        stop = result.outcomes[0].stopped
        # the copies written but never renamed into place are not counted as copied
        assert seen[-1].bytes_done == result.outcomes[0].bytes == big * result.copied
    else:
        [scrub] = verify_destinations(library, "usb")
        assert len(scrub.lost) == len(snap.file_ids)
        stop = scrub.stopped
    assert calls >= pull_at
    assert stop is not None and stop.reason is StopReason.GONE
    assert not drive.exists()  # no empty folder tree where the drive was
    monkeypatch.setattr(copier, "matches", real_matches)
    away.rename(drive)  # plugged back in
    assert check_drive(library, drive, dest) == []
    assert run_mirror(library).ok
    assert present_ids(library, dest) == set(snap.file_ids)
