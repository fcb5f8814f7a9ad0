"""Legacy folders for the layout tests: ArchiveBox 0.7 / 0.8 data folders and archiver-1 libraries.

The ArchiveBox folders follow its documented per-snapshot ``index.json``: 0.7 writes the
``Link`` schema with a ``history`` dict of ``ArchiveResult`` lists per extractor; 0.8 writes
the ``Snapshot`` JSON with an ``archive_results`` list. Outputs are the usual ones: a WARC
under ``warc/``, ``screenshot.png``, ``output.pdf``, ``singlefile.html``, ``output.html``,
``readability/content.txt`` and a wget domain folder.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from archiver_app.library import Library
from tests.helpers.testsite import png

#: A real PNG (the app makes thumbnails of these), then a random tail where a size is wanted.
PNG = png(4, 4, (200, 200, 200))
PDF = b"%PDF-1.4\n% test\n%%EOF\n"


def write_warc(path: Path, url: str, body: bytes, when: datetime) -> None:
    """A real gzipped WARC with a request-less response record for ``url``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        http = StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
        )
        record = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            http_headers=http,
            warc_headers_dict={"WARC-Date": when.strftime("%Y-%m-%dT%H:%M:%SZ")},
        )
        writer.write_record(record)
        extra = writer.create_warc_record(
            url + "style.css",
            "response",
            payload=io.BytesIO(b"body{}"),
            http_headers=StatusAndHeaders(
                "200 OK", [("Content-Type", "text/css")], protocol="HTTP/1.1"
            ),
            warc_headers_dict={"WARC-Date": when.strftime("%Y-%m-%dT%H:%M:%SZ")},
        )
        writer.write_record(extra)


def _result(extractor: str, output: str | None, when: datetime, version: str) -> dict[str, object]:
    entry: dict[str, object] = {
        "cmd": [extractor, "--flag"],
        "pwd": "/data/archive/x",
        "cmd_version": "1.0",
        "output": output,
        "status": "succeeded" if output else "failed",
        "start_ts": when.isoformat(),
        "end_ts": (when + timedelta(seconds=3)).isoformat(),
    }
    if version == "0.7":
        entry["schema"] = "ArchiveResult"
    else:
        entry["extractor"] = extractor
    return entry


@dataclass
class AbxSnapshot:
    url: str
    timestamp: str
    title: str | None
    tags: str
    text: str

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(float(self.timestamp), UTC)


def write_archivebox_snapshot(
    archive: Path,
    snap: AbxSnapshot,
    version: str,
    *,
    name: str | None = None,
    outputs: dict[str, str | None] | None = None,
) -> Path:
    """One ``archive/<timestamp>/`` folder with real outputs and its index.json."""
    folder = archive / (name or snap.timestamp)
    folder.mkdir(parents=True)
    host = snap.url.split("/")[2]
    write_warc(
        folder / "warc" / f"{snap.timestamp}.warc.gz",
        snap.url,
        f"<html><title>{snap.title}</title>{snap.text}</html>".encode(),
        snap.when,
    )
    (folder / "screenshot.png").write_bytes(PNG + snap.timestamp.encode())
    (folder / "output.pdf").write_bytes(PDF + snap.timestamp.encode())
    (folder / "singlefile.html").write_text(f"<html>{snap.text}</html>")
    (folder / "output.html").write_text(f"<html><body>{snap.text}</body></html>")
    (folder / "readability").mkdir()
    (folder / "readability" / "content.txt").write_text(snap.text)
    (folder / host).mkdir()
    (folder / host / "index.html").write_text(f"<html>wget {snap.text}</html>")
    default_outputs: dict[str, str | None] = {
        "wget": f"{host}/index.html",
        "warc": f"warc/{snap.timestamp}.warc.gz",
        "screenshot": "screenshot.png",
        "pdf": "output.pdf",
        "singlefile": "singlefile.html",
        "dom": "output.html",
        "readability": "readability",
        "title": snap.title,
        "media": None,
    }
    default_outputs.update(outputs or {})
    results = {k: [_result(k, v, snap.when, version)] for k, v in default_outputs.items()}
    if version == "0.7":
        data: dict[str, object] = {
            "schema": "Link",
            "url": snap.url,
            "timestamp": snap.timestamp,
            "title": snap.title,
            "tags": snap.tags,
            "sources": ["/data/sources/bookmarks.html"],
            "history": results,
            "base_url": snap.url.split("://", 1)[1],
            "domain": host,
            "is_archived": True,
            "num_outputs": len(results),
            "updated": snap.when.isoformat(),
        }
    else:
        data = {
            "TYPE": "core.models.Snapshot",
            "url": snap.url,
            "timestamp": snap.timestamp,
            "title": snap.title,
            "tags": snap.tags,
            "bookmarked_at": snap.when.isoformat(),
            "archive_results": [r for rs in results.values() for r in rs],
        }
    (folder / "index.json").write_text(json.dumps(data, indent=4))
    return folder


def build_archivebox_data_folder(
    root: Path, version: str, count: int = 4, *, odd: bool = True
) -> list[AbxSnapshot]:
    """An ArchiveBox data folder; with ``odd`` also the awkward cases real folders have."""
    archive = root / "archive"
    archive.mkdir(parents=True)
    (root / "index.sqlite3").write_bytes(b"SQLite format 3\x00")
    (root / "ArchiveBox.conf").write_text("[SERVER_CONFIG]\nSECRET_KEY = test\n")
    snaps = [
        AbxSnapshot(
            url=f"https://site{i}.example/page/{i}",
            timestamp=f"16111111{i:02d}.{i}",
            title=f"Page number {i} about rivers"
            if i % 2 == 0
            else f"https://site{i}.example/page/{i}",
            tags="research,rivers" if i % 2 else "",
            text=f"unique{version.replace('.', '')}word{i} text about water and rivers",
        )
        for i in range(count)
    ]
    for snap in snaps:
        write_archivebox_snapshot(archive, snap, version)
    if odd:
        (archive / "1500000000.1").mkdir()  # no index.json at all
        (archive / "1500000000.1" / "screenshot.png").write_bytes(PNG)
        (archive / "1500000000.2").mkdir()  # invalid JSON
        (archive / "1500000000.2" / "index.json").write_text("{not json")
        (archive / "1500000000.2" / "output.pdf").write_bytes(PDF)
        # unknown files beside the usual outputs
        (archive / snaps[0].timestamp / "notes.unknown").write_bytes(b"\x00\x01odd")
        # the same url + timestamp twice (a second folder), with one extra output
        dup = write_archivebox_snapshot(
            archive, snaps[1], version, name=snaps[1].timestamp + "-dup"
        )
        (dup / "extra.pdf").write_bytes(PDF + b"extra")
        (dup / "index.json").write_text(
            (dup / "index.json").read_text().replace('"research,rivers"', '"research,dup-tag"')
        )
        # traversal: outputs naming ../ and absolute paths, and a symlink leading outside
        secret = root / "outside-secret.txt"
        secret.write_text("must never be copied")
        bad = AbxSnapshot("https://evil.example/x", "1622222222.5", "Evil page title", "", "evil")
        folder = write_archivebox_snapshot(
            archive,
            bad,
            version,
            outputs={"pdf": "../../outside-secret.txt", "screenshot": str(secret)},
        )
        (folder / "link-out").symlink_to(secret)
    return snaps


@pytest.fixture
def archivebox_factory(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(
        version: str, count: int = 4, *, odd: bool = True, where: Path | None = None
    ) -> tuple[Path, list[AbxSnapshot]]:
        root = (where or tmp_path) / f"abx-{version}"
        return root, build_archivebox_data_folder(root, version, count, odd=odd)

    return make


# ---------------------------------------------------------------------- archiver-1 libraries


def legacy_library(
    lib: Library, count: int, *, seed: int = 7, file_bytes: int = 200, register: bool = True
) -> dict[str, tuple[int, str]]:
    """Rows at ``archiver-1`` with flat ``archive/<timestamp>/`` folders of three small files.

    With ``register`` the files also have ``files`` rows (size and sha256), as captures
    leave them. Returns ``{"<uid>/<name>": (size, sha256)}`` for every original file
    except index.json.
    """
    coll_id = lib.ensure_collection("default")
    rng = random.Random(seed)
    start = datetime(2022, 1, 1, tzinfo=UTC)
    originals: dict[str, tuple[int, str]] = {}
    rows = []
    for i in range(count):
        at = start + timedelta(seconds=i * 3637 + rng.randrange(3000))
        stamp = f"{at.timestamp():.0f}.{i}"
        uid = f"{at:%Y%m%dT%H%M%SZ}-{i:08x}"
        folder = lib.root / "archive" / stamp
        (folder / "media").mkdir(parents=True)
        files = {
            "page.warc.gz": rng.randbytes(file_bytes),
            "screenshot.png": PNG + rng.randbytes(file_bytes // 2),
            "media/clip.bin": rng.randbytes(file_bytes // 4),
        }
        for name, data in files.items():
            (folder / name).write_bytes(data)
            originals[f"{uid}/{name}"] = (len(data), hashlib.sha256(data).hexdigest())
        url = f"https://site{i % 50}.example/p/{i}"
        (folder / "index.json").write_text(
            json.dumps(
                {
                    "fs_version": "archiver-1",
                    "uid": uid,
                    "url": url,
                    "captured_at": at.isoformat(),
                    "timestamp": stamp,
                    "collection": "default",
                    "title": f"Title {i}",
                    "tags": ["t"],
                }
            )
        )
        naive = at.astimezone(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
        rows.append(
            (
                uid,
                coll_id,
                url,
                f"example,site{i % 50})/p/{i}",
                f"example,site{i % 50})/p/{i}",
                f"site{i % 50}.example",
                naive,
                "complete",
                f"Title {i}",
                0,
                "archiver-1",
                "",
                f"archive/{stamp}",
                naive,
                naive,
            )
        )
    sqlite = lib.engine.dialect.name == "sqlite"
    # SQLite through its own module (as an old library's rows would be found); any other
    # database through the engine's driver, in its placeholder style
    conn: Any = sqlite3.connect(lib.db_path) if sqlite else lib.engine.raw_connection()
    mark = "?" if sqlite else "%s"
    try:
        cur = conn.cursor()
        cur.executemany(
            "INSERT INTO snapshots (uid, collection_id, url, url_key, url_group, domain,"
            " captured_at, state, title, size_bytes, fs_version, notes, folder, created_at,"
            " updated_at)"
            f" VALUES ({','.join([mark] * 15)})",
            rows,
        )
        if register:
            cur.execute("SELECT uid, folder, id FROM snapshots")
            found = cur.fetchall()
            folders = {uid: folder for uid, folder, _ in found}
            ids = {uid: sid for uid, _, sid in found}
            cur.executemany(
                "INSERT INTO files (path, size, sha256, kind, snapshot_id, local_state,"
                f" created_at) VALUES ({mark},{mark},{mark},'other',{mark},'present',"
                "'2024-01-01 00:00:00.000000')",
                [
                    (
                        f"{folders[key.split('/')[0]]}/{key.split('/', 1)[1]}",
                        size,
                        sha,
                        ids[key.split("/")[0]],
                    )
                    for key, (size, sha) in originals.items()
                ],
            )
        conn.commit()
    finally:
        conn.close()
    return originals
