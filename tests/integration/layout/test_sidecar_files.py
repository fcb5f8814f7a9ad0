"""Every snapshot folder's ``index.json`` has its ``files`` row, so drives keep it too.

Captures and imports register it; snapshots that reach the current layout from an
archiver-1 folder (the migrator's batches, a save, ``update --import-orphans``) or from an
ArchiveBox data folder must too, and ``archiver update`` registers it where an older
version left it out.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from typing import Any

import pytest
from sqlalchemy import delete, select

from archiver_app.layout.archivebox import register_archivebox
from archiver_app.layout.migrate import save_snapshot
from archiver_app.layout.migrator import run_migrator
from archiver_app.layout.update import update_library
from archiver_app.library import Library
from archiver_app.store.models import File, Snapshot
from tests.helpers.legacy import legacy_library


def _sidecars_registered(library: Library) -> int:
    """How many snapshots there are, once each is known to have a ``files`` row (kind
    sidecar, its own) for its folder's index.json describing the bytes on disk."""
    with library.session() as s:
        snaps = s.execute(select(Snapshot.id, Snapshot.folder)).all()
        for sid, folder in snaps:
            row = s.scalar(select(File).where(File.path == f"{folder}/index.json"))
            assert row is not None, f"snapshot {sid}: {folder}/index.json has no files row"
            data = (library.root / row.path).read_bytes()
            assert (row.kind, row.snapshot_id) == ("sidecar", sid)
            assert (row.size, row.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    return len(snaps)


@pytest.mark.parametrize("register", [True, False])
def test_migrated_archiver_1_snapshots_register_their_index_json(
    library: Library, register: bool
) -> None:
    legacy_library(library, 5, register=register)
    with library.session() as s:
        first = s.scalars(select(Snapshot.id).order_by(Snapshot.id)).first()
    assert first is not None
    save_snapshot(library, first)  # migration on save: one snapshot
    run_migrator(library, batch_size=2)  # the rest in batches
    assert _sidecars_registered(library) == 5


def test_orphan_folders_register_their_index_json(library: Library) -> None:
    legacy_library(library, 2)
    run_migrator(library)
    archive = library.root / "archive"
    archive.mkdir(exist_ok=True)
    with library.session() as s:
        folder = s.scalars(select(Snapshot.folder)).first()
    assert folder is not None
    lost = archive / "1644444444.0"  # an archiver-1 folder whose row was lost
    shutil.copytree(library.root / folder, lost)
    data = json.loads((lost / "index.json").read_text())
    data.update(
        fs_version="archiver-1",
        uid="20220202T020202Z-0000abcd",
        url="https://lost.example/",
        title="Lost row",
    )
    (lost / "index.json").write_text(json.dumps(data))
    report = update_library(library, with_orphans=True)
    assert report.orphans is not None and report.orphans.imported == 1
    assert _sidecars_registered(library) == 3


def test_archivebox_snapshots_register_their_index_json(
    library: Library, archivebox_factory: Any
) -> None:
    source, snaps = archivebox_factory("0.8", odd=False)
    register_archivebox(library, source)
    report = run_migrator(library, batch_size=3)
    assert report.failed == [] and report.imported.imported == len(snaps)
    assert _sidecars_registered(library) == len(snaps)


def test_update_registers_an_index_json_an_older_version_left_out(library: Library) -> None:
    legacy_library(library, 3)
    run_migrator(library)
    with library.write() as s:  # as an older version left migrated snapshots
        s.execute(delete(File).where(File.kind == "sidecar"))
    update_library(library)
    assert _sidecars_registered(library) == 3
