"""ArchiveBox 0.7 and 0.8 data folders: registered in O(1), imported by the migrator, usable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from archiver_app.errors import InputError
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.archivebox import register_archivebox
from archiver_app.layout.migrator import run_migrator
from archiver_app.library import Library
from archiver_app.store.models import File, ImportSource, Record, Snapshot
from archiver_app.warc.reader import read_record_at
from tests.helpers.files import tree_digest
from tests.helpers.mounts import small_drive


def _import(library: Library, source: Path) -> Any:
    reg = register_archivebox(library, source)
    with library.session() as s:
        assert s.scalar(select(text("count(*)")).select_from(Snapshot)) == 0  # O(1): nothing read
        assert s.get(ImportSource, reg.id).state == "registered"
    again = register_archivebox(library, source)
    assert again.id == reg.id  # registering twice is harmless
    return run_migrator(library, batch_size=3)


@pytest.mark.parametrize("version", ["0.7", "0.8"])
def test_archivebox_folder_is_imported_and_usable(
    version: str, library: Library, archivebox_factory: Any, tmp_path: Path
) -> None:
    if version == "0.8":  # the ArchiveBox folder on another device (a tmpfs "drive")
        with small_drive(tmp_path / "drive", 64 * 1024) as drive:
            _check_import(version, library, *archivebox_factory(version, where=drive))
    else:
        _check_import(version, library, *archivebox_factory(version))


def _check_import(version: str, library: Library, source: Path, snaps: list[Any]) -> None:
    before = tree_digest(source)
    report = _import(library, source)
    assert tree_digest(source) == before  # copy mode: the ArchiveBox folder is untouched
    assert report.failed == []
    assert report.imported.imported == len(snaps) + 1  # + the page with traversal outputs
    assert report.imported.merged == 1  # the duplicate url+timestamp folder
    assert report.imported.invalid == 2  # missing index.json, invalid JSON

    root = library.root
    with library.session() as s:
        rows = s.scalars(select(Snapshot).order_by(Snapshot.captured_at)).all()
        assert {r.fs_version for r in rows} == {CURRENT_FS_VERSION}
        by_url = {r.url: r for r in rows}
        assert len(by_url) == len(rows)
        for snap in snaps:
            row = by_url[snap.url]
            folder = root / row.folder
            assert folder.is_dir()
            assert row.capture_fidelity == "imported"
            assert row.provenance["source_fs_version"] == f"archivebox-{version}"
            assert set(row.provenance["archive_results"]) >= {"wget", "screenshot", "pdf"}
            kinds = {
                f.path.removeprefix(row.folder + "/"): f.kind
                for f in s.scalars(select(File).where(File.snapshot_id == row.id))
            }
            # screenshots, PDFs, single-file HTML, wget folder and unknown files stay attached
            assert kinds["screenshot.png"] == "screenshot"
            assert kinds["output.pdf"] == "pdf"
            assert kinds["singlefile.html"] == "dom"
            assert kinds[f"warc/{snap.timestamp}.warc.gz"] == "warc"
            assert kinds["index.archivebox.json"] == "sidecar"  # the original index, kept
            host = snap.url.split("/")[2]
            assert f"{host}/index.html" in kinds
            assert kinds["index.json"] == "sidecar"  # ours, written from the row
            for rel in kinds:
                if rel == "index.json":
                    continue
                original = (
                    source
                    / "archive"
                    / snap.timestamp
                    / rel.replace("index.archivebox.json", "index.json")
                )
                if original.exists():
                    assert (folder / rel).read_bytes() == original.read_bytes()
            # the main response is replayable from the imported WARC
            assert row.warc_file is not None and row.warc_offset is not None
            stored = read_record_at(root / row.warc_file, row.warc_offset, row.warc_length)
            assert stored.uri == snap.url
            assert stored.http_status == 200
            assert snap.text.encode() in stored.payload
            records = s.scalars(select(Record).where(Record.snapshot_id == row.id)).all()
            assert {r.url for r in records} == {snap.url, snap.url + "style.css"}
            assert all(r.ts.startswith(snap.when.strftime("%Y%m%d%H%M%S")) for r in records)
            # title: the longest non-URL title; a URL-only title stays until a better one
            sidecar = json.loads((folder / "index.json").read_text())
            assert sidecar["fs_version"] == CURRENT_FS_VERSION
            assert sidecar["uid"] == row.uid
            if snap is not snaps[1]:  # (the duplicate's tags are checked below)
                assert sidecar["tags"] == sorted(t for t in snap.tags.split(",") if t)
        # the duplicate folder was merged into one snapshot: union of tags and files
        dup = by_url[snaps[1].url]
        dup_files = set(s.scalars(select(File.path).where(File.snapshot_id == dup.id)))
        assert f"{dup.folder}/extra.pdf" in dup_files
        tags = json.loads((root / dup.folder / "index.json").read_text())["tags"]
        assert set(tags) == {"research", "rivers", "dup-tag"}
        # traversal: outputs naming ../ or absolute paths and an outside symlink are refused,
        # reported, and the folder is still imported without them
        evil = by_url["https://evil.example/x"]
        assert len(evil.provenance["refused"]) == 3
        assert not any("outside-secret" in p for p in s.scalars(select(File.path)))
        secret = (source / "outside-secret.txt").read_bytes()
        for path in root.rglob("*"):
            assert not (path.is_file() and path.read_bytes() == secret), path
    refused = "\n".join(report.imported.refused)
    assert "../../outside-secret.txt" in refused
    assert "symlink leading outside" in refused
    # un-understandable folders were copied to invalid/<yyyymmdd>/<name>, not lost
    day = library.clock().strftime("%Y%m%d")
    assert (root / "invalid" / day / "1500000000.1" / "screenshot.png").is_file()
    assert (root / "invalid" / day / "1500000000.2" / "index.json").read_text() == "{not json"
    # page text is searchable
    conn = sqlite3.connect(library.db_path)
    try:
        word = snaps[2].text.split()[0]
        hits = conn.execute("SELECT rowid FROM snapshot_fts WHERE snapshot_fts MATCH ?", (word,))
        assert [h[0] for h in hits] == [by_url[snaps[2].url].id]
        state = conn.execute("SELECT state, cursor FROM import_sources").fetchone()
        assert state[0] == "done"
    finally:
        conn.close()
    # a second run finds nothing to do
    again = run_migrator(library)
    assert again.imported.imported == 0
    assert again.migrated == 0


def test_register_refuses_what_is_not_an_archivebox_folder(
    library: Library, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match="not a folder"):
        register_archivebox(library, tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(InputError, match="not an ArchiveBox data folder"):
        register_archivebox(library, tmp_path / "plain")
    (library.root / "archive").mkdir()
    with pytest.raises(InputError, match="inside the library"):
        register_archivebox(library, library.root)
    with pytest.raises(InputError, match="import mode"):
        register_archivebox(library, tmp_path, mode="teleport")


def test_cli_import_archivebox_then_migrate(
    library_root: Path, archivebox_factory: Any, capsys: Any
) -> None:
    from archiver_app.cli import main

    source, snaps = archivebox_factory("0.8", count=2, odd=False)
    args = ["--library", str(library_root)]
    assert main([*args, "import", "--archivebox", str(source)]) == 0
    assert "registered ArchiveBox folder" in capsys.readouterr().out
    assert main([*args, "migrate", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "imported 2, merged 0, set aside 0 as invalid" in out
    with Library.open(library_root) as lib, lib.session() as s:
        urls = set(s.scalars(select(Snapshot.url)))
    assert urls == {snap.url for snap in snaps}
