"""Mirror runs on real folders: plans, verified copies, bit rot, scrub, views."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, update

from archiver_app.library import Library
from archiver_app.mirror import (
    add_destination,
    list_destinations,
    run_mirror,
    set_policy,
    snapshot_copies,
    verify_destinations,
)
from archiver_app.mirror.destinations import find_mounted
from archiver_app.mirror.director import Transfer, interleave, plan_mirror
from archiver_app.mirror.outcomes import StopReason
from archiver_app.mirror.policy import collection_policies, library_policy
from archiver_app.store.models import CopyState, File, LocalState
from tests.helpers.mirror_data import (
    add_revisit,
    check_drive,
    copy_states,
    make_snapshot,
    present_ids,
    set_copy_state,
)


def _drive(library: Library, tmp_path: Path, name: str) -> tuple[int, Path]:
    path = tmp_path / name
    path.mkdir()
    return add_destination(library, path, name).id, path


def flip_byte(path: Path, offset: int = 10) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_mirror_copies_every_file_verified_and_a_second_run_has_nothing_to_do(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [0, 1, 5000, 300_000, 2_500_000], seed=1)
    usb, mount = _drive(library, tmp_path, "usb")
    updates = []
    result = run_mirror(library, progress=updates.append)
    assert result.ok and result.copied == 5
    assert present_ids(library, usb) == set(snap.file_ids)
    assert check_drive(library, mount, usb) == []
    for rel in snap.paths:
        assert (mount / "Archiver" / library.id / rel).read_bytes() == (
            library.root / rel
        ).read_bytes()
    assert not list((mount / "Archiver" / library.id / ".archiver-staging").iterdir())
    final = updates[-1]
    assert final.done == 5 and final.bytes_done == final.bytes_total == 2_805_001
    # the last word says what was done and how long it took, not an ETA of nothing
    assert final.message.startswith("mirror: 5 files, 2.8 MB in ") and "ETA" not in final.message
    updates.clear()
    again = run_mirror(library, progress=updates.append)
    assert again.plan.transfers == [] and again.copied == 0
    assert updates[-1].message == "mirror: nothing to do"


def test_a_run_whose_drive_is_pulled_says_how_little_it_did_not_nothing_to_do(
    library: Library, tmp_path: Path
) -> None:
    """The last progress line came after "usb: 0 copied, 4 failed; stopped: the drive is
    gone" and said "mirror: nothing to do"."""
    make_snapshot(library, [1000, 2000, 3000, 4000], seed=31)
    _, mount = _drive(library, tmp_path, "usb")
    updates = []

    def pull(_plan: object) -> None:  # the plan is made: the drive goes before any copy
        mount.rename(tmp_path / "pulled")

    result = run_mirror(library, progress=updates.append, on_plan=pull)
    assert not result.ok and result.copied == 0
    assert updates[-1].message.startswith("mirror: 0 of 4 files, 0 B in "), updates[-1]


def test_files_that_stay_below_their_policy_are_named(library: Library, tmp_path: Path) -> None:
    """The plan said "1 file stays below its policy: ..." without saying which."""
    from archiver_app.mirror import set_policy

    one = make_snapshot(library, [50], seed=32)
    _drive(library, tmp_path, "usb")
    set_policy(library, copies=3)  # this computer and one drive: every file one short
    lines = run_mirror(library, dry_run=True).plan.describe()
    assert lines[-1] == (
        "  1 file stays below its policy: too few drives: add one, or let the policy allow"
        f" more ({one.paths[0]})"
    )
    snap = make_snapshot(library, [100, 200, 300, 400], seed=33)
    lines = run_mirror(library, dry_run=True).plan.describe()
    (short,) = [line for line in lines if "stay below their policy" in line]
    named = sorted([*one.paths, *snap.paths])[:3]
    assert short.endswith(f"({', '.join(named)} and 2 more)"), short


def test_policy_counts_the_laptop_and_respects_allowed_destinations(
    library: Library, tmp_path: Path
) -> None:
    make_snapshot(library, [1000, 2000], seed=2)
    library.ensure_collection("secret")
    secret = make_snapshot(library, [3000], collection="secret", seed=3)
    a, _ = _drive(library, tmp_path, "a")
    b, _ = _drive(library, tmp_path, "b")
    set_policy(library, collection="secret", copies=3, destinations=["a", "b"])
    set_policy(library, destinations=["a"])  # default collection: only drive a
    result = run_mirror(library)
    assert result.ok
    assert present_ids(library, a) == {1, 2, 3}
    assert present_ids(library, b) == set(secret.file_ids)  # 3 copies = laptop + a + b


def test_absent_drive_and_no_room_are_reported_not_copied(library: Library, tmp_path: Path) -> None:
    make_snapshot(library, [1000] * 3, seed=4)
    a, mount_a = _drive(library, tmp_path, "a")
    mount_a.rename(tmp_path / "unplugged")
    plan = run_mirror(library, dry_run=True).plan
    assert plan.transfers == [] and plan.waiting_for == {"a": 3}
    assert "a: not mounted; 3 files wait for it" in "\n".join(plan.describe())
    assert copy_states(library, a) == {}


def test_revisit_originals_travel_with_the_snapshot(library: Library, tmp_path: Path) -> None:
    original = make_snapshot(library, [4000], seed=5)
    later = make_snapshot(library, [3000], seed=6, collection="later")
    add_revisit(library, later.file_ids[0], original.file_ids[0])
    a, _ = _drive(library, tmp_path, "a")
    b, _ = _drive(library, tmp_path, "b")
    set_policy(library, destinations=["a"])
    set_policy(library, collection="later", destinations=["b"])
    assert run_mirror(library).ok
    assert present_ids(library, a) == set(original.file_ids)
    assert present_ids(library, b) == {later.file_ids[0], original.file_ids[0]}
    report = snapshot_copies(library, later.snapshot_id)
    by_label = {d.label: d for d in report.destinations}
    assert by_label["b"].safe and not by_label["a"].safe
    assert report.safe_copies == 2
    set_copy_state(library, original.file_ids[0], b, CopyState.CORRUPTED)
    report = snapshot_copies(library, later.snapshot_id)
    b_view = {d.label: d for d in report.destinations}["b"]
    assert b_view.present == 1 and b_view.dependencies_missing == 1 and not b_view.safe


def test_plan_treats_fresh_ongoing_as_in_progress_and_stale_as_missing(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [100], seed=7)
    a, _ = _drive(library, tmp_path, "a")
    set_copy_state(library, snap.file_ids[0], a, CopyState.ONGOING)
    mounted = find_mounted(library)
    args = (library, mounted, set(mounted), collection_policies(library), library_policy(library))
    assert plan_mirror(*args).transfers == []
    assert len(plan_mirror(*args, stale_ongoing={a}).transfers) == 1


@pytest.mark.parametrize("size", [200_000, 3_000_000], ids=["small", "kernel-copied"])
def test_laptop_bit_rot_is_detected_and_repaired_from_a_drive(
    library: Library, tmp_path: Path, size: int
) -> None:
    """The copy to a new drive is not hashed at the source: its read-back mismatches, the
    source is hashed then, found rotten, repaired from the good drive, and copied again."""
    snap = make_snapshot(library, [size, 3000], seed=8)
    _a, _ = _drive(library, tmp_path, "a")
    b, mount_b = _drive(library, tmp_path, "b")
    set_policy(library, destinations=["a"])
    assert run_mirror(library).ok
    good = (library.root / snap.paths[0]).read_bytes()
    flip_byte(library.root / snap.paths[0], offset=size // 2)
    set_policy(library, copies=3, destinations=None)
    result = run_mirror(library)
    assert result.local_repaired == [snap.paths[0]]
    assert (library.root / snap.paths[0]).read_bytes() == good
    assert present_ids(library, b) == set(snap.file_ids)
    assert (mount_b / "Archiver" / library.id / snap.paths[0]).read_bytes() == good
    assert check_drive(library, mount_b, b) == []
    with library.session() as s:
        assert s.get(File, snap.file_ids[0]).local_state == LocalState.PRESENT  # type: ignore[union-attr]


def test_laptop_bit_rot_without_a_good_copy_is_never_copied(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [5000], seed=9)
    a, mount = _drive(library, tmp_path, "a")
    flip_byte(library.root / snap.paths[0])
    result = run_mirror(library)
    assert not result.ok and result.local_unrepairable == [snap.paths[0]]
    assert present_ids(library, a) == set()
    assert not (mount / "Archiver" / library.id / snap.paths[0]).exists()
    with library.session() as s:
        assert s.get(File, snap.file_ids[0]).local_state == LocalState.CORRUPTED  # type: ignore[union-attr]


def test_scrub_marks_drive_bit_rot_and_repairs_it(library: Library, tmp_path: Path) -> None:
    snap = make_snapshot(library, [100_000, 2000, 3000], seed=10)
    a, mount = _drive(library, tmp_path, "a")
    assert run_mirror(library).ok
    folder = mount / "Archiver" / library.id
    flip_byte(folder / snap.paths[0])
    (folder / snap.paths[1]).unlink()
    [report] = verify_destinations(library, "a", repair=False)
    assert report.corrupted == [snap.paths[0]] and report.lost == [snap.paths[1]]
    states = copy_states(library, a)
    assert states[snap.file_ids[0]] == CopyState.CORRUPTED
    assert states[snap.file_ids[1]] == CopyState.MISSING
    status = {d.label: d for d in list_destinations(library)}["a"]
    assert (status.present, status.corrupted, status.missing) == (1, 1, 1)
    assert status.last_verified_at is not None and status.mounted and not status.busy
    [again] = verify_destinations(library, "a", repair=False)  # still said, still unmet
    assert again.lost == [snap.paths[1]] and again.unrepaired == 2 and again.unmet
    assert "1 missing" in again.describe()
    flip_byte(folder / snap.paths[2])
    [report] = verify_destinations(library, "a")  # repairs what it finds bad now
    assert report.corrupted == [snap.paths[0], snap.paths[2]] and report.lost == [snap.paths[1]]
    assert report.repaired == 3 and report.unrepaired == 0 and not report.unmet
    assert check_drive(library, mount, a) == []
    assert present_ids(library, a) == set(snap.file_ids)
    assert (folder / snap.paths[1]).read_bytes() == (library.root / snap.paths[1]).read_bytes()
    assert (folder / snap.paths[2]).read_bytes() == (library.root / snap.paths[2]).read_bytes()
    assert run_mirror(library).copied == 0  # the scrub restored the lost copy too


def _offloaded_on_four_drives(
    library: Library, tmp_path: Path
) -> tuple[str, int, dict[str, tuple[int, Path]]]:
    """One file with good copies on drives blue, red, mid and tiny, not on this computer."""
    snap = make_snapshot(library, [40_000], seed=31)
    drives = {name: _drive(library, tmp_path, name) for name in ("blue", "red", "mid", "tiny")}
    set_policy(library, copies=5)
    run_mirror(library)
    (library.root / snap.paths[0]).unlink()
    with library.write() as s:
        s.execute(
            update(File).where(File.id == snap.file_ids[0]).values(local_state=LocalState.OFFLOADED)
        )
    return snap.paths[0], snap.file_ids[0], drives


def test_a_scrub_repairs_from_the_next_good_copy_when_the_first_source_is_bad(
    library: Library, tmp_path: Path
) -> None:
    """Blue's copy is rotten and so is red's, its first source: red's is marked corrupted
    and blue's is repaired from another drive's good copy."""
    path, fid, drives = _offloaded_on_four_drives(library, tmp_path)
    for name in ("blue", "red"):
        flip_byte(drives[name][1] / "Archiver" / library.id / path)
    [report] = verify_destinations(library, "blue")
    assert report.corrupted == [path]
    assert (report.repaired, report.unrepaired, report.unmet) == (1, 0, None)
    assert report.repaired_from[path] in ("mid", "tiny")
    assert copy_states(library, drives["blue"][0])[fid] == CopyState.PRESENT
    assert copy_states(library, drives["red"][0])[fid] == CopyState.CORRUPTED
    good = (drives["mid"][1] / "Archiver" / library.id / path).read_bytes()
    assert (drives["blue"][1] / "Archiver" / library.id / path).read_bytes() == good


def test_a_copy_a_scrub_could_not_repair_stays_corrupted(library: Library, tmp_path: Path) -> None:
    """With every other copy in reach rotten too, blue's copy is not repaired: it is still
    counted corrupted, never turned into a harmless-looking "missing"."""
    path, fid, drives = _offloaded_on_four_drives(library, tmp_path)
    for name in drives:
        flip_byte(drives[name][1] / "Archiver" / library.id / path)
    [report] = verify_destinations(library, "blue")
    assert (report.corrupted, report.repaired, report.unrepaired) == ([path], 0, 1)
    assert report.unmet
    assert copy_states(library, drives["blue"][0])[fid] == CopyState.CORRUPTED
    status = {d.label: d for d in list_destinations(library)}
    assert (status["blue"].corrupted, status["blue"].missing) == (1, 0)
    for name in ("red", "mid", "tiny"):
        assert copy_states(library, drives[name][0])[fid] == CopyState.CORRUPTED


def test_a_copy_that_never_reached_a_drive_is_not_the_scrub_s(
    library: Library, tmp_path: Path
) -> None:
    """A copy that failed before it was ever verified there is the mirror's to make (the
    policy may have it elsewhere by now), not a loss a scrub reports or repairs."""
    snap = make_snapshot(library, [2000], seed=11)
    a, _mount = _drive(library, tmp_path, "a")
    set_copy_state(library, snap.file_ids[0], a, CopyState.MISSING)
    [report] = verify_destinations(library, "a")
    assert (report.checked, report.lost, report.repaired, report.unmet) == (0, [], 0, None)


def test_cancel_stops_between_files_and_the_next_run_finishes(
    library: Library, tmp_path: Path
) -> None:
    from archiver_app.tasks import CancelToken, ProgressUpdate

    snap = make_snapshot(library, [100_000] * 40, seed=11)
    a, mount = _drive(library, tmp_path, "a")
    set_policy(library, batch_size=2, parallelism=1)
    token = CancelToken()

    def cancel_early(update: ProgressUpdate) -> None:
        if update.done >= 1:
            token.cancel()

    run_mirror(library, cancel=token, progress=cancel_early, progress_interval=0)
    assert 0 < len(present_ids(library, a)) < 40
    assert check_drive(library, mount, a) == []
    assert run_mirror(library).ok and present_ids(library, a) == set(snap.file_ids)


def test_interleave_spreads_large_files_and_keeps_dependencies_first() -> None:
    def transfer(fid: int, size: int, required: int | None) -> Transfer:
        return Transfer(fid, f"f{fid:03d}", "0" * 64, size, 1, "/x", required=required)

    deps = [transfer(i, 10, None) for i in range(3)] + [transfer(3, 10**8, None)]
    rest = [transfer(i, 100, 2) for i in range(10, 30)] + [
        transfer(i, 10**8, 2) for i in range(30, 34)
    ]
    out = interleave(deps + rest)
    assert sorted(t.file_id for t in out) == list(range(4)) + list(range(10, 34))
    assert {t.file_id for t in out[:4]} == set(range(4))  # dependencies stay ahead
    tail = out[4:]
    large_at = [i for i, t in enumerate(tail) if t.size > 10**6]
    assert large_at == [0, 6, 12, 18]  # one large file every 5 small ones
    small = [t.file_id for t in tail if t.size <= 10**6]
    assert small == sorted(small)  # each kind keeps its order


def test_copies_already_on_the_drive_are_adopted_only_when_they_hash_right(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [3000, 4000, 300_000, 5000], seed=7)
    usb, mount = _drive(library, tmp_path, "usb")
    folder = mount / "Archiver" / library.id
    good, rotten, large = (folder / snap.paths[i] for i in (0, 1, 2))
    for path, i in ((good, 0), (rotten, 1), (large, 2)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((library.root / snap.paths[i]).read_bytes())
    flip_byte(rotten)  # e.g. left by a drive that was written, then forgotten by the DB
    result = run_mirror(library)
    assert result.ok
    [outcome] = result.outcomes
    assert (outcome.adopted, outcome.copied) == (2, 2)  # the rotten one is copied again
    assert present_ids(library, usb) == set(snap.file_ids)
    assert check_drive(library, mount, usb) == []
    assert rotten.read_bytes() == (library.root / snap.paths[1]).read_bytes()


def test_new_folders_on_the_drive_are_made_durable_with_the_files(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the drive shares the library's file system (one ``syncfs`` would cover the
    laptop's disk too) or has no ``syncfs``, folders are fsynced one by one: every folder
    created for a copy must have its entry made durable in its parent too."""
    import os

    from archiver_app.mirror import copier

    make_snapshot(library, [1000, 2000], seed=1)
    usb = tmp_path / "usb"
    usb.mkdir()
    add_destination(library, usb, "usb")
    synced: set[str] = set()
    real = copier.sync_filesystem

    def watched(folder: str | Path, dirs: object = (), *, whole_fs: bool = True) -> None:
        listed = [os.fspath(d) for d in dirs]  # type: ignore[attr-defined]
        synced.update(listed)
        real(folder, listed, whole_fs=False)

    monkeypatch.setattr(copier, "sync_filesystem", watched)
    assert run_mirror(library).ok
    base = usb / "Archiver" / library.id
    created = [d for d, _, _ in os.walk(base) if ".archiver-staging" not in d and d != str(base)]
    assert created
    assert [d for d in created if os.path.dirname(d) not in synced] == []


def test_a_copy_whose_file_changed_while_it_was_written_is_not_recorded(
    library: Library, tmp_path: Path
) -> None:
    from archiver_app.mirror import copy_states as states
    from archiver_app.store.copies import forget_copies

    snap = make_snapshot(library, [1000, 2000], seed=3)
    usb = tmp_path / "usb"
    usb.mkdir()
    dest = add_destination(library, usb, "usb").id
    first, second = snap.file_ids
    states.set_states(library, dest, {first: "ongoing", second: "ongoing"}, verified=False)
    with library.write() as s:  # the first file's bytes change in the library meanwhile
        forget_copies(s.connection(), [first])
    states.update_states(library, dest, {first: "present", second: "present"}, verified=True)
    assert copy_states(library, dest) == {first: CopyState.MISSING, second: CopyState.PRESENT}


@pytest.mark.parametrize("when", ["before the check", "during the check"])
def test_a_laptop_file_rewritten_during_a_repair_is_left_as_rewritten(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """A sidecar is rewritten (new bytes and row, in one write transaction) just after the
    mirror read its row, so its laptop copy no longer matches that row: a change, not rot.
    The new file stays; the drive's old copy is not put back over it."""
    import hashlib
    import threading

    from archiver_app.mirror import copier, repair
    from archiver_app.mirror.progress import RunProgress
    from archiver_app.store.copies import forget_copies
    from archiver_app.tasks import CancelToken

    snap = make_snapshot(library, [3000], seed=4)
    usb = tmp_path / "usb"
    usb.mkdir()
    add_destination(library, usb, "usb")
    assert run_mirror(library).ok
    [fid] = snap.file_ids
    target = library.abspath(snap.paths[0])
    new = b"rewritten from the database" * 10
    written, checked = threading.Event(), threading.Event()

    def rewrite() -> None:  # what write_snapshot_sidecar does, in this order
        with library.write() as s:
            s.execute(select(File.path).where(File.id == fid))  # BEGIN IMMEDIATE: locked
            target.write_bytes(new)
            written.set()
            if when == "during the check":
                checked.wait(5)  # commits only once the repair saw the new bytes
            forget_copies(s.connection(), [fid])
            s.execute(
                update(File)
                .where(File.id == fid)
                .values(sha256=hashlib.sha256(new).hexdigest(), size=len(new))
            )

    rewriter = threading.Thread(target=rewrite)
    real_matches = copier.matches

    def rewritten_first(path: str | Path, sha256: str, size: int, **kw: bool) -> bool:
        if not written.is_set():  # the repair has read the row; now the file is rewritten
            rewriter.start()
            written.wait(5)
            if when == "before the check":
                rewriter.join(5)
        good = real_matches(path, sha256, size, **kw)
        checked.set()
        return good

    monkeypatch.setattr(copier, "matches", rewritten_first)
    ctx = repair.RunContext(
        library, find_mounted(library), RunProgress(lambda _u: None, "t", 0, 0), CancelToken()
    )
    try:
        with pytest.raises(repair.FileChanged):
            repair.repair_local(ctx, fid)
    finally:
        checked.set()
        rewriter.join(5)
    assert target.read_bytes() == new
    with library.session() as s:
        row = s.get(File, fid)
        assert row is not None and row.local_state == LocalState.PRESENT
        assert row.sha256 == hashlib.sha256(new).hexdigest()
    assert ctx.local_repaired == [] and ctx.local_unrepairable == []


def test_a_copy_on_a_drive_the_policy_does_not_allow_does_not_count(
    library: Library, tmp_path: Path
) -> None:
    """docs/drives.md: only allowed drives hold and count for a collection's copies. A
    copy made on ``x`` before the policy narrowed to ``a`` leaves the file one short."""
    snap = make_snapshot(library, [1000, 2000], seed=21)
    x, _ = _drive(library, tmp_path, "x")
    assert run_mirror(library).ok and present_ids(library, x) == set(snap.file_ids)
    a, _ = _drive(library, tmp_path, "a")
    set_policy(library, destinations=["a"])
    plan = run_mirror(library, dry_run=True).plan
    assert plan.files_needing == 2
    assert {(t.file_id, t.destination_id) for t in plan.transfers} == {
        (f, a) for f in snap.file_ids
    }
    result = run_mirror(library)
    assert result.ok and result.policy_holds and result.copied == 2
    assert present_ids(library, a) == set(snap.file_ids)


def test_no_eta_is_guessed_from_the_first_moments() -> None:
    """An ETA from the start-up's rate said an hour for a run of a second: none before
    2 s or a tenth of the bytes."""
    from archiver_app.mirror.progress import RunProgress

    now = [0.0]
    run = RunProgress(lambda _u: None, "mirror", 100, 1_000_000, clock=lambda: now[0])
    now[0] = 0.5
    run.add(files=1, nbytes=10)
    assert run.eta_seconds() is None  # 0.5 s and 0.001 % in: too early to tell
    now[0] = 2.5
    run.add(files=1, nbytes=499_990)
    assert run.eta_seconds() == 2.5  # half done in 2.5 s: as long again
    early = RunProgress(lambda _u: None, "mirror", 2, 1_000, clock=lambda: now[0])
    early.add(files=1, nbytes=500)
    now[0] += 0.1
    assert early.eta_seconds() is not None  # a tenth done: the rate means something


def test_a_drive_counts_as_verified_from_its_copies_not_only_from_scrubs(
    library: Library, tmp_path: Path
) -> None:
    from datetime import timedelta

    from archiver_app.store.models import Copy

    make_snapshot(library, [1000, 2000], seed=11)
    a, _ = _drive(library, tmp_path, "a")
    status = {d.label: d for d in list_destinations(library)}["a"]
    assert status.last_verified_at is None and status.scrub_due  # nothing on it yet
    assert run_mirror(library).ok  # each copy is hashed as it is written: verified now
    status = {d.label: d for d in list_destinations(library)}["a"]
    assert status.last_verified_at is not None and not status.scrub_due
    old = library.clock() - timedelta(days=40)
    with library.write() as s:  # one copy last verified long ago: the drive is due
        first = s.scalars(select(Copy).where(Copy.destination_id == a)).first()
        assert first is not None
        first.verified_at = old
    status = {d.label: d for d in list_destinations(library)}["a"]
    assert status.last_verified_at == old and status.scrub_due


def test_a_drive_without_this_library_s_folder_is_not_written(
    library: Library, tmp_path: Path
) -> None:
    """The library's folder on a drive is made when the drive is added, never by a run:
    a run that made it could as well make it under a drive's empty mount point."""
    import shutil

    make_snapshot(library, [1000], seed=8)
    _dest, usb = _drive(library, tmp_path, "usb")
    shutil.rmtree(usb / "Archiver" / library.id)
    result = run_mirror(library)
    assert not result.policy_holds and result.copied == 0
    stop = result.plan.unusable["usb"]
    assert stop.reason is StopReason.NO_LIBRARY_FOLDER  # mounted: not "gone"
    assert "this library's folder" in stop.message
    assert not (usb / "Archiver" / library.id).exists()
    [scrub] = verify_destinations(library, "usb")
    assert scrub.stopped is not None and scrub.stopped.reason is StopReason.NO_LIBRARY_FOLDER
    [status] = list_destinations(library)
    assert status.mounted and status.library_folder_missing
    assert not (usb / "Archiver" / library.id).exists()


def test_progress_counts_the_bytes_of_the_copies_made_not_of_those_that_failed(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy written, then found bad when read back, was not copied: its bytes leave the
    progress figures again, so the run ends saying what it copied."""
    from archiver_app.mirror import copier
    from archiver_app.mirror.outcomes import CopyResult
    from archiver_app.tasks import ProgressUpdate

    size = 300_000  # read back one by one (``copier.matches``)
    snap = make_snapshot(library, [size] * 4, seed=12)
    dest, _usb = _drive(library, tmp_path, "usb")
    bad = snap.paths[1]
    real = copier.matches

    def one_reads_back_wrong(path: str | Path, sha256: str, size: int, **kw: bool) -> bool:
        # the temporary file of ``bad`` (named after nothing): told apart by its hash
        return real(path, sha256, size, **kw) and sha256 != bad_sha

    with library.session() as s:
        bad_sha = s.scalars(select(File.sha256).where(File.path == bad)).one()
    monkeypatch.setattr(copier, "matches", one_reads_back_wrong)
    seen: list[ProgressUpdate] = []
    result = run_mirror(library, progress=seen.append, progress_interval=0)
    [outcome] = result.outcomes
    assert outcome.copied == 3 and outcome.failed == {CopyResult.BAD_READ_BACK: 1}
    last = seen[-1]
    assert (last.done, last.bytes_done) == (3, 3 * size) == (outcome.copied, outcome.bytes)
    assert last.message.startswith("mirror: 3 of 4 files, 900.0 KB in ")  # not 1.2 MB
    assert all(u.bytes_done <= 4 * size for u in seen)
    assert present_ids(library, dest) == set(snap.file_ids) - {snap.file_ids[1]}


def test_the_plan_says_one_copy_and_one_file(tmp_path: Path) -> None:
    from archiver_app.mirror.destinations import MountedDestination
    from archiver_app.mirror.director import DestinationPlan, Plan

    usb = MountedDestination(1, "u", "usb", tmp_path, "lib")
    one = Transfer(1, "a", "0" * 64, 7_300, 1, str(tmp_path / "a"))
    plan = Plan({1: DestinationPlan(usb, 10**9, [one])}, files_needing=1)
    plan.waiting_for["red"] = 1
    assert plan.describe() == [
        "plan: 1 copy, 7.3 KB (1 file below its policy)",
        f"  usb ({tmp_path}): 1 file, 7.3 KB, 1.0 GB free",
        "  red: not mounted; 1 file waits for it",
    ]


def test_only_the_drives_a_run_uses_are_busy_while_it_copies(
    library: Library, tmp_path: Path
) -> None:
    """Every plugged-in drive read "busy, not safe to unplug" while a mirror ran, though
    it wrote to one. Now the drive it writes to and the one it copies from stay busy; a
    drive it does not use is safe to unplug (and free for another run) as it copies."""
    from archiver_app.mirror.locking import is_busy

    snap = make_snapshot(library, [1000, 2000, 3000], seed=41)
    blue, blue_at = _drive(library, tmp_path, "blue")
    assert run_mirror(library).copied == 3
    with library.write() as s:  # freed here: a second copy comes from blue's
        s.execute(update(File).values(local_state=LocalState.OFFLOADED))
    red, red_at = _drive(library, tmp_path, "red")
    _, green_at = _drive(library, tmp_path, "green")
    set_policy(library, destinations=["blue", "red"])
    seen: list[dict[str, bool]] = []

    def look(_update: object) -> None:
        seen.append(
            {n: is_busy(p) for n, p in (("blue", blue_at), ("red", red_at), ("green", green_at))}
        )

    result = run_mirror(library, progress=look, progress_interval=0)
    assert result.ok and result.copied == 3
    assert present_ids(library, red) == set(snap.file_ids) == present_ids(library, blue)
    assert seen and all(s == {"blue": True, "red": True, "green": False} for s in seen)
    assert not any(is_busy(p) for p in (blue_at, red_at, green_at))


def test_the_plan_says_the_reserve_it_keeps_when_a_file_has_no_room(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drive with 307 KB free was said to have "no room" for a 300 KB file, its free
    space shown as 297 KB with no word of the 10 KB (1 %) every drive keeps free. The plan
    says the drive's free space as `archiver drives` does, and the reserve beside it."""
    import shutil
    from collections import namedtuple

    from archiver_app.mirror import director

    made = make_snapshot(library, [300_000], seed=43)
    _, mount = _drive(library, tmp_path, "usb")
    usage = namedtuple("usage", "total used free")
    real = shutil.disk_usage

    def small(path: object) -> object:
        return usage(1_000_000, 693_000, 307_000) if Path(str(path)) == mount else real(path)

    monkeypatch.setattr(director.shutil, "disk_usage", small)
    lines = run_mirror(library, dry_run=True).plan.describe()
    assert lines[1] == f"  usb ({mount}): 0 files, 0 B, 307.0 KB free, 10.0 KB kept in reserve"
    assert lines[2] == (
        "  1 file stays below its policy: no room left on the mounted drives (past what each"
        f" keeps in reserve: 1% of the drive, at most 64 MiB) ({made.paths[0]})"
    )
