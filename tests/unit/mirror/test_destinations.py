"""Destinations: marker files, recognition wherever mounted, mount-point scanning, locks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror import add_destination, find_mounted, scan_markers
from archiver_app.mirror.destinations import read_marker, unknown_markers
from archiver_app.mirror.locking import DestinationBusy, destination_lock, is_busy
from archiver_app.mirror.mounts import MARKER_NAME, candidate_folders, default_scan_roots
from tests.helpers.mounts import read_only_folder


def test_add_writes_marker_and_row(library: Library, tmp_path: Path) -> None:
    drive = tmp_path / "usb"
    drive.mkdir()
    row = add_destination(library, drive, "Blue drive")
    data = json.loads((drive / MARKER_NAME).read_text())
    assert data["uuid"] == row.uuid and data["label"] == "Blue drive"
    assert (drive / "Archiver" / library.id).is_dir()
    assert row.last_mount_path == str(drive) and row.capacity_bytes


def test_add_refuses_bad_labels(library: Library, tmp_path: Path) -> None:
    for label in ["", "   ", "a,b", "x" * 201, "tab\there"]:
        with pytest.raises(InputError, match="invalid drive label"):
            add_destination(library, tmp_path, label)
    assert not (tmp_path / MARKER_NAME).exists()


def test_add_refuses_bad_folders(library: Library, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a folder"):
        add_destination(library, tmp_path / "nope", "a")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        add_destination(library, tmp_path / "file", "a")
    ro = tmp_path / "ro"
    ro.mkdir()
    with read_only_folder(ro), pytest.raises(InputError, match=r"not writable|cannot write"):
        add_destination(library, ro, "ro")
    assert not (ro / MARKER_NAME).exists()


def test_add_refuses_a_folder_inside_or_around_the_library_or_another_drive(
    library: Library, tmp_path: Path
) -> None:
    """Copies inside the library go with it, and copies inside another drive go with
    that drive: neither is a second copy (mirror wrote "drive copies" into the library)."""
    inside = library.root / "collections"
    inside.mkdir(exist_ok=True)
    with pytest.raises(InputError, match="is inside the library's folder"):
        add_destination(library, inside, "inlib")
    with pytest.raises(InputError, match="is around the library's folder"):
        add_destination(library, library.root.parent, "around")
    (tmp_path / "drives" / "red" / "sub").mkdir(parents=True)
    add_destination(library, tmp_path / "drives" / "red", "red")
    with pytest.raises(InputError, match="is inside drive 'red'"):
        add_destination(library, tmp_path / "drives" / "red" / "sub", "sub")
    assert not (inside / MARKER_NAME).exists() and not (library.root.parent / MARKER_NAME).exists()


def test_add_refuses_duplicates(library: Library, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    add_destination(library, tmp_path / "a", "one")
    with pytest.raises(InputError, match="already labelled"):
        add_destination(library, tmp_path / "b", "one")
    with pytest.raises(InputError, match="already the destination 'one'"):
        add_destination(library, tmp_path / "a", "two")
    assert not (tmp_path / "b" / MARKER_NAME).exists()


def test_marker_from_another_library_keeps_its_uuid(tmp_path: Path) -> None:
    drive = tmp_path / "usb"
    drive.mkdir()
    with Library.open(tmp_path / "lib1") as one, Library.open(tmp_path / "lib2") as two:
        a = add_destination(one, drive, "usb")
        b = add_destination(two, drive, "same usb")
        assert a.uuid == b.uuid
        assert (drive / "Archiver" / one.id).is_dir() and (drive / "Archiver" / two.id).is_dir()


def test_recognised_wherever_it_is_mounted(library: Library, tmp_path: Path) -> None:
    media = tmp_path / "media"
    first = media / "user" / "USB"
    first.mkdir(parents=True)
    row = add_destination(library, first, "usb")
    assert set(find_mounted(library)) == {row.id}
    moved = tmp_path / "mnt" / "other-name"
    moved.parent.mkdir()
    first.rename(moved)
    assert find_mounted(library) == {}  # not at the old place, not under the scan roots
    found = find_mounted(library, scan_roots=[tmp_path / "mnt"])
    assert found[row.id].mount == moved and found[row.id].folder == moved / "Archiver" / library.id
    assert find_mounted(library)[row.id].mount == moved  # remembered for next time


def test_marker_with_other_uuid_is_not_the_drive(library: Library, tmp_path: Path) -> None:
    drive = tmp_path / "usb"
    drive.mkdir()
    row = add_destination(library, drive, "usb")
    (drive / MARKER_NAME).write_text(
        json.dumps(
            {"format": "archiver-destination", "uuid": "00000000-0000-0000-0000-000000000001"}
        )
    )
    assert row.id not in find_mounted(library)
    assert read_marker(drive) is not None
    (drive / MARKER_NAME).write_text("{not json")
    assert read_marker(drive) is None


def test_scan_and_unknown_markers(library: Library, tmp_path: Path) -> None:
    media = tmp_path / "media"
    (media / "alice" / "stick").mkdir(parents=True)
    (media / "alice" / "photos").mkdir()
    other = Library.open(tmp_path / "other")
    try:
        add_destination(other, media / "alice" / "stick", "stick")
    finally:
        other.close()
    found = scan_markers([media, tmp_path / "absent"])
    assert list(found.values()) == [media / "alice" / "stick"]
    assert unknown_markers(library, [media]) == found


def test_default_scan_roots_per_os() -> None:
    assert default_scan_roots("Linux") == [Path("/media"), Path("/run/media"), Path("/mnt")]
    assert default_scan_roots("Darwin") == [Path("/Volumes")]
    win = default_scan_roots("Windows")
    assert len(win) == 26 and str(win[3]).startswith("D:")
    assert list(candidate_folders([Path("/definitely/not/here")])) == [Path("/definitely/not/here")]


def test_lock_is_exclusive_and_released_when_the_holder_dies(tmp_path: Path) -> None:
    with destination_lock(tmp_path, label="usb"):
        assert is_busy(tmp_path)
        with pytest.raises(DestinationBusy, match="is busy"), destination_lock(tmp_path):
            pass
    assert not is_busy(tmp_path)
    code = (
        "import sys,time; from pathlib import Path;"
        "from archiver_app.mirror.locking import destination_lock;"
        "cm = destination_lock(Path(sys.argv[1])); cm.__enter__(); print('held', flush=True);"
        "time.sleep(60)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert is_busy(tmp_path)
    finally:
        proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert not is_busy(tmp_path)
    with destination_lock(tmp_path):
        pass


def test_lock_on_a_vanished_drive_is_an_oserror(tmp_path: Path) -> None:
    drive = tmp_path / "gone"
    drive.mkdir()
    os.chmod(drive, 0o700)
    shutil.rmtree(drive)
    assert not is_busy(drive)
