"""Offload keeps an accepted edition's members below the policy, and says which edition."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.mirror import add_destination, parse_age, run_mirror, set_policy
from archiver_app.mirror.offload import offload
from archiver_app.store.fulltext import upsert_snapshot_text
from tests.helpers.mirror_data import make_snapshot


def test_offload_names_the_accepted_edition_whose_members_it_keeps(
    library: Library, tmp_path: Path
) -> None:
    old = make_snapshot(library, [2000], seed=7, captured_at=datetime(2020, 5, 1, tzinfo=UTC))
    other = make_snapshot(library, [900], seed=8, captured_at=datetime(2020, 6, 1, tzinfo=UTC))
    detail = library.snapshots.detail(old.snapshot_id)
    assert detail is not None
    with library.write() as s:
        upsert_snapshot_text(s.connection(), old.snapshot_id, title="t", url=detail.url, body="b")
    library.editions.create("default", "old-2020", year=2020, targets_text=f"{detail.url}\n")
    assert not library.editions.accept("old-2020").refused
    (tmp_path / "a").mkdir()
    add_destination(library, tmp_path / "a", "a")
    set_policy(library, destinations=["a"])  # two copies asked, one drive allowed
    assert run_mirror(library).ok

    r = offload(library, parse_age("1y"))
    assert (r.snapshots, r.not_safe) == (0, 2)
    assert r.editions_kept == {"old-2020": 1}  # `other` is in no edition
    assert other.snapshot_id not in r.candidates


def test_an_accepted_edition_is_offloaded_once_safe_and_its_release_brings_it_back(
    library: Library, tmp_path: Path
) -> None:
    import zipfile

    import pytest

    from archiver_app.editions.release import export_edition
    from archiver_app.importers.warcs import import_warc_file
    from archiver_app.mirror.scrub import DriveNotMounted
    from archiver_app.store.models import File, LocalState
    from tests.helpers.warcs import site, write_warc

    import_warc_file(library, write_warc(tmp_path / "site.warc.gz", site(2)), collection="c")
    pages = "".join(f"https://example.org/page{i}\n" for i in range(2))
    library.editions.create("c", "c-2024", year=2024, targets_text=pages)
    assert not library.editions.accept("c-2024").refused
    for label in ("blue", "green"):
        (tmp_path / label).mkdir()
        add_destination(library, tmp_path / label, label)
    set_policy(library, copies=3)  # this computer and both drives
    assert run_mirror(library).ok
    set_policy(library, copies=2)  # two verified copies besides this computer's: safe

    # Not pinned: safe on the policy's drives, it frees the laptop like any capture.
    r = offload(library, parse_age("1d"))
    assert r.editions_offloaded == {"c-2024": 1} and r.editions_kept == {}  # one folder
    with library.session() as s:
        assert set(s.scalars(select(File.local_state))) == {LocalState.OFFLOADED}

    # The drives unplugged: the release names them and writes nothing.
    for label in ("blue", "green"):
        (tmp_path / label).rename(tmp_path / f"{label}-away")
    out = tmp_path / "release" / "c-2024.wacz"
    out.parent.mkdir()
    with pytest.raises(DriveNotMounted, match="'blue' or 'green'"):
        export_edition(library, "c-2024", out)
    assert list(out.parent.iterdir()) == []

    # Plugged in again: the members come back, verified, and the release is whole.
    (tmp_path / "green-away").rename(tmp_path / "green")
    result = export_edition(library, "c-2024", out)
    assert result.wacz.problems == [] and result.wacz.pages == 2
    with zipfile.ZipFile(out) as zf:
        assert any(n.startswith("archive/") for n in zf.namelist())
    with library.session() as s:
        assert LocalState.OFFLOADED not in set(s.scalars(select(File.local_state)))
    assert library.editions.get("c-2024").frozen  # nothing about it changed
