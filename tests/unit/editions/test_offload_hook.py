"""Offload keeps an accepted edition's members below the policy, and says which edition."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from archiver_app.library import Library
from archiver_app.mirror import add_destination, offload, parse_age, run_mirror, set_policy
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
