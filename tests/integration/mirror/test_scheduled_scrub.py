"""The laptop's own copies are re-verified too, and scrubs run when they are due."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.mirror import (
    add_destination,
    run_mirror,
    scheduled_scrub,
    scrubs_due,
    verify_library,
)
from archiver_app.mirror.scrub import THIS_COMPUTER
from archiver_app.mirror.status import SCRUB_KEY
from archiver_app.store.models import File, LocalState, Setting
from tests.helpers.mirror_data import make_snapshot


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _states(library: Library, ids: list[int]) -> list[tuple[str, bool]]:
    with library.session() as s:
        rows = {f.id: f for f in s.scalars(select(File).where(File.id.in_(ids)))}
        return [(rows[i].local_state, rows[i].verified_at is not None) for i in ids]


def test_the_laptop_copy_is_reverified_and_repaired_from_a_drive(
    library: Library, tmp_path: Path
) -> None:
    snap = make_snapshot(library, [5000, 7000, 9000, 11000], seed=7)
    drive = tmp_path / "usb"
    drive.mkdir()
    add_destination(library, drive, "usb")
    assert run_mirror(library).ok
    originals = [library.abspath(p).read_bytes() for p in snap.paths]
    _flip(library.abspath(snap.paths[1]))  # bit rot on the laptop
    library.abspath(snap.paths[2]).unlink()  # lost on the laptop

    result = verify_library(library)
    assert (result.checked, result.ok, result.repaired, result.unrepaired) == (4, 2, 2, 0)
    assert (result.corrupted, result.lost) == ([snap.paths[1]], [snap.paths[2]])
    assert result.describe() == (
        "this computer: 4 copies checked, 2 good, 1 corrupted, 1 missing;"
        " 2 repaired from a good copy, 0 could not be repaired"
    )
    assert [library.abspath(p).read_bytes() for p in snap.paths] == originals
    assert _states(library, snap.file_ids) == [("present", True)] * 4

    drive.rename(tmp_path / "usb-away")  # no good copy mounted: reported, marked
    _flip(library.abspath(snap.paths[3]))
    alone = verify_library(library)
    assert alone.corrupted == [snap.paths[3]] and alone.unrepaired == 1
    assert "could not be repaired" in alone.describe()
    assert _states(library, snap.file_ids)[3][0] == LocalState.CORRUPTED


def test_scrubs_run_when_due(library: Library, tmp_path: Path) -> None:
    make_snapshot(library, [4000, 4000], seed=8)
    drive, empty = tmp_path / "usb", tmp_path / "new-drive"
    drive.mkdir()
    empty.mkdir()
    add_destination(library, drive, "usb")
    assert run_mirror(library).ok
    add_destination(library, empty, "new")  # mounted, holding nothing: nothing to verify
    assert scrubs_due(library) == [THIS_COMPUTER, "usb"]
    done = scheduled_scrub(library)
    # the drive's copies were verified as they were written, minutes ago: none is re-read
    assert [(r.label, r.checked, r.ok) for r in done] == [(THIS_COMPUTER, 2, 2), ("usb", 0, 0)]
    assert scrubs_due(library) == []

    start = library.clock()
    library.clock = lambda: start + timedelta(days=31)  # the default interval is 30 days
    assert scrubs_due(library) == [THIS_COMPUTER, "usb"]
    again = scheduled_scrub(library)
    assert [(r.label, r.checked, r.ok) for r in again] == [(THIS_COMPUTER, 2, 2), ("usb", 2, 2)]
    with library.write() as s:  # the interval the settings dialog sets, for all of them
        s.merge(Setting(key=SCRUB_KEY, value={"interval_days": 60}))
    library.clock = lambda: start + timedelta(days=31 + 59)
    assert scrubs_due(library) == []
    library.clock = lambda: start + timedelta(days=31 + 61)
    assert scrubs_due(library) == [THIS_COMPUTER, "usb"]


def test_linked_files_are_neither_checked_nor_written(library: Library, tmp_path: Path) -> None:
    """A WARC imported with --link stays the user's: when its folder is gone (a stick not
    plugged in), the laptop scrub does not mark it nor recreate anything there."""
    from archiver_app.importers.run import import_paths
    from tests.helpers.warcs import Resp, html_page, write_warc

    stick = tmp_path / "stick"
    stick.mkdir()
    warc = write_warc(stick / "linked.warc.gz", [Resp("https://l.example/", html_page("L", "x"))])
    assert import_paths(library, [warc], link=True).outcomes[0].records == 1
    stick.rename(tmp_path / "stick-unplugged")
    result = verify_library(library)
    assert (result.corrupted, result.lost) == ([], [])
    assert not stick.exists()  # nothing written where the stick was
    with library.session() as s:
        linked = s.scalars(select(File).where(File.external_path.is_not(None))).one()
        assert linked.local_state == LocalState.PRESENT


def test_an_interrupted_scheduled_scrub_goes_on_where_it_stopped(library: Library) -> None:
    """The user's work stops a scheduled pass; the next one checks only what the first did
    not (each file's own verification time says), then the pass counts as done."""
    from archiver_app.mirror import set_policy
    from archiver_app.tasks import CancelToken, ProgressUpdate

    make_snapshot(library, [3000] * 6, seed=9)
    set_policy(library, parallelism=1)  # one file at a time: the stop lands between files
    token = CancelToken()

    def stop(update: ProgressUpdate) -> None:
        if update.done >= 1:
            token.cancel()

    [first] = scheduled_scrub(library, progress=stop, cancel=token)
    assert 1 <= first.checked < 6
    assert scrubs_due(library) == [THIS_COMPUTER]  # not done yet
    [second] = scheduled_scrub(library)
    assert (second.label, second.checked) == (THIS_COMPUTER, 6 - first.checked)
    assert scrubs_due(library) == []
    assert verify_library(library).checked == 6  # asked for by hand: every file
