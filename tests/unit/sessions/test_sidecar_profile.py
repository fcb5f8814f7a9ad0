"""A snapshot folder says which profile it was captured with, and a fresh library that
imports the folder keeps saying so."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from archiver_app.layout.current import CURRENT_FS_VERSION, snapshot_folder
from archiver_app.layout.sidecar import SIDECAR_COLUMNS, build_sidecar, write_sidecar
from archiver_app.layout.update import update_library
from archiver_app.library import Library
from archiver_app.store.models import Snapshot


def _values(uid: str, folder: str, profile: str | None) -> dict[str, object]:
    values: dict[str, object] = dict.fromkeys(SIDECAR_COLUMNS)
    values.update(
        uid=uid,
        url=f"https://courses.example.edu/{uid}",
        captured_at=datetime(2026, 11, 2, 9, 30, tzinfo=UTC),
        folder=folder,
        fs_version=CURRENT_FS_VERSION,
        state="complete",
        provenance={},
        profile=profile,
    )
    return values


def test_the_profile_travels_with_the_folder(library: Library) -> None:
    when = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
    names = {"a1": "university", "b2": None, "c3": "../not-a-name"}
    for uid, profile in names.items():
        folder = snapshot_folder("courses", when, uid)
        (library.root / folder).mkdir(parents=True)
        data = build_sidecar(_values(uid, str(folder), profile), "courses", [], [])
        assert ("profile" in data) is (profile is not None)
        write_sidecar(library.root / folder, data)
    update_library(library, with_orphans=True)
    with library.session() as s:
        rows = {r.uid: r.profile for r in s.scalars(select(Snapshot))}
    assert rows == {"a1": "university", "b2": None, "c3": None}
