"""Retiring a drive: its copies stop counting, the mirror makes them again elsewhere, an
offloaded file's only copy is never given up unasked, and reinstating adopts what is left."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from archiver_app.cli import main
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror import (
    add_destination,
    list_destinations,
    parse_age,
    run_mirror,
    set_policy,
)
from archiver_app.mirror.offload import offload
from archiver_app.mirror.policy import library_policy, shortfall
from archiver_app.mirror.retire import reinstate_destination, retire_destination
from archiver_app.store.models import CopyState, Destination
from tests.helpers.mirror_data import copy_states, make_snapshot


def _dest_id(lib: Library, label: str) -> int:
    with lib.session() as s:
        return int(s.scalar(select(Destination.id).where(Destination.label == label)) or 0)


def _drives(lib: Library, tmp_path: Path, *labels: str) -> None:
    for label in labels:
        (tmp_path / label).mkdir()
        add_destination(lib, tmp_path / label, label)


def test_a_retired_drive_stops_counting_and_the_mirror_copies_elsewhere(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [5_000, 700], seed=1)
    _drives(library, tmp_path, "red")
    assert run_mirror(library).ok
    red = _dest_id(library, "red")
    assert set(copy_states(library, red).values()) == {CopyState.PRESENT}

    done = retire_destination(library, "red")
    assert (done.copies, done.lost) == (len(snap.file_ids), 0)
    assert set(copy_states(library, red).values()) == {CopyState.MISSING}
    on_red = [p for p in (tmp_path / "red" / "Archiver").rglob("*.bin") if p.is_file()]
    assert len(on_red) == len(snap.file_ids)  # nothing on the drive was touched
    row = {d.label: d for d in list_destinations(library, scan_roots=[tmp_path])}["red"]
    assert not row.enabled and not row.mounted and (row.present, row.missing) == (0, 0)
    # no drive in use is left: the policy says so, and a mirror writes nothing to red
    assert shortfall(library, library_policy(library)) is not None
    assert run_mirror(library, scan_roots=[tmp_path]).copied == 0
    assert set(copy_states(library, red).values()) == {CopyState.MISSING}

    _drives(library, tmp_path, "blue")
    assert run_mirror(library, scan_roots=[tmp_path]).copied == len(snap.file_ids)
    with pytest.raises(InputError, match="retired already"):
        retire_destination(library, "red")

    reinstate_destination(library, "red")
    with pytest.raises(InputError, match="in use already"):
        reinstate_destination(library, "red")
    set_policy(library, copies=3)  # now red is needed again: what is on it is adopted
    assert run_mirror(library, scan_roots=[tmp_path]).ok
    assert set(copy_states(library, red).values()) == {CopyState.PRESENT}


def test_a_reinstated_drive_s_copies_still_on_it_count_even_those_the_policy_does_not_need(
    library: Library, tmp_path: Path
) -> None:
    """After retire then reinstate, the next mirror checks every copy still on the drive,
    not only those the policy needs again: none is said "not here" while it is there, and
    one that rotted meanwhile is not counted."""
    snap = make_snapshot(library, [5_000, 700, 300, 9_000], seed=4)
    _drives(library, tmp_path, "blue", "red")
    set_policy(library, copies=3)
    assert run_mirror(library, scan_roots=[tmp_path]).ok
    retire_destination(library, "blue")
    set_policy(library, copies=2)  # red alone is enough now: blue is needed for nothing
    reinstate_destination(library, "blue")
    folder = tmp_path / "blue" / "Archiver" / library.id
    (folder / snap.paths[1]).unlink()  # gone meanwhile
    data = bytearray((folder / snap.paths[2]).read_bytes())
    data[0] ^= 0xFF
    (folder / snap.paths[2]).write_bytes(bytes(data))  # rotted meanwhile
    result = run_mirror(library, scan_roots=[tmp_path])
    assert result.ok and result.copied == 0
    states = copy_states(library, _dest_id(library, "blue"))
    assert [states[f] for f in snap.file_ids] == [
        CopyState.PRESENT,
        CopyState.MISSING,
        CopyState.CORRUPTED,
        CopyState.PRESENT,
    ]
    row = {d.label: d for d in list_destinations(library, scan_roots=[tmp_path])}["blue"]
    assert (row.present, row.corrupted, row.missing) == (2, 1, 1)
    assert (result.found_again, result.found_corrupted) == ({"blue": 2}, {"blue": 1})
    lines = result.describe()
    assert "  blue: 2 copies still on it, checked and counted again; 1 corrupted" in lines
    again = run_mirror(library, scan_roots=[tmp_path])  # checked once: not again
    assert (again.found_again, again.found_corrupted) == ({}, {})


def test_an_only_copy_is_not_given_up_unless_the_drive_is_lost(
    any_library: Library, tmp_path: Path
) -> None:
    library = any_library
    make_snapshot(library, [5_000, 700], seed=1, captured_at=datetime(2020, 5, 1, tzinfo=UTC))
    _drives(library, tmp_path, "red", "blue")
    set_policy(library, copies=2, destinations=["red"])
    assert run_mirror(library).ok
    set_policy(library, copies=1)
    assert offload(library, parse_age("1y")).files == 2  # the only copies: on red

    with pytest.raises(InputError, match=r"2 files this computer does not hold \(offloaded\)"):
        retire_destination(library, "red")
    assert set(copy_states(library, _dest_id(library, "red")).values()) == {CopyState.PRESENT}
    retire_destination(library, "blue")  # holds nothing: retiring it loses nothing

    set_policy(library, copies=2, destinations=None)
    reinstate_destination(library, "blue")
    assert run_mirror(library).ok  # drive to drive: red's copies are made on blue too
    assert retire_destination(library, "red").lost == 0

    reinstate_destination(library, "red")
    assert run_mirror(library).ok
    assert retire_destination(library, "blue").lost == 0
    forced = retire_destination(library, "red", force=True)
    assert forced.lost == 2 and forced.copies == 2


def test_the_commands_say_what_retiring_did(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_snapshot(library, [5_000], seed=1)
    _drives(library, tmp_path, "red")
    assert run_mirror(library).ok
    root = str(library.root)
    library.close()

    assert main(["--library", root, "drives", "retire", "red"]) == 0
    out, err = capsys.readouterr()
    assert "retired drive 'red': its 1 copy no longer count" in out
    assert "archiver drives reinstate red puts it back" in out
    assert err == (
        "archiver: warning: the retention policy cannot be met: it asks for 2 copies and only"
        " this computer may hold one; add a drive (archiver drives add) and allow it, or lower"
        " --copies\n"
    )
    assert main(["--library", root, "drives"]) == 0
    out, _ = capsys.readouterr()
    assert "red: retired\n    0 present, 0 not here" in out
    assert "0 files safe, 1 at risk" in out
    assert main(["--library", root, "drives", "retire", "red"]) == 2
    assert "drive 'red' is retired already" in capsys.readouterr().err
    assert main(["--library", root, "drives", "reinstate", "red"]) == 0
    assert "drive 'red' is in use again" in capsys.readouterr().out
    assert main(["--library", root, "drives", "retire", "nope"]) == 2
    assert "no destination labelled 'nope'; known: red" in capsys.readouterr().err


def test_a_copy_on_a_drive_without_this_library_s_folder_is_no_other_copy(
    library: Library, tmp_path: Path
) -> None:
    """Retiring red, which holds offloaded files, was allowed because blue held them too,
    while blue was mounted with this library's folder moved aside (its copies cannot be
    read and count nowhere else). And a retired drive reads "retired" in a capture's copies
    (it read like any drive), counting as no copy."""
    snap = make_snapshot(
        library, [5_000, 700], seed=1, captured_at=datetime(2020, 5, 1, tzinfo=UTC)
    )
    _drives(library, tmp_path, "red", "blue")
    set_policy(library, copies=3)
    assert run_mirror(library).ok
    set_policy(library, copies=2)
    assert offload(library, parse_age("1y")).files == 2
    folder = tmp_path / "blue" / "Archiver" / library.id
    folder.rename(folder.with_name("aside"))
    with pytest.raises(InputError, match=r"2 files this computer does not hold"):
        retire_destination(library, "red")
    folder.with_name("aside").rename(folder)
    assert retire_destination(library, "red").lost == 0
    detail = library.snapshots.detail(snap.snapshot_id)
    assert detail is not None
    assert {c.where: c.state for c in detail.copies if c.where != "Laptop"} == {
        "blue": "present",
        "red": "retired",
    }
    assert detail.whole_copies == 1
