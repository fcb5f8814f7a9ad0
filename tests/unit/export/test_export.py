"""Exports: WACZ structure and hashes, plain folders, sorted CDXJ, revisits resolved,
temporary name until complete."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sqlite3
import subprocess
import zipfile
from pathlib import Path

import pytest

from archiver_app.errors import InputError
from archiver_app.export import Selection, export
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from archiver_app.warc.scan import scan_records
from tests.helpers.warcs import Resp, html_page, site, write_warc


@pytest.fixture
def lib_with_revisit(library: Library, tmp_path: Path) -> Library:
    first = site(2)
    import_warc_file(library, write_warc(tmp_path / "one.warc.gz", first), collection="one")
    # a later capture in another collection whose page0 is a revisit of collection one's
    later = [
        Resp(
            "https://example.org/new",
            html_page("New page", "fresh words here"),
            date="2024-06-02T00:00:00Z",
        )
    ]
    import_warc_file(
        library,
        write_warc(
            tmp_path / "two.warc",
            later,
            gz=False,
            revisit_of={"https://example.org/page0": first[0]},
        ),
        collection="two",
    )
    return library


def _cdxj(lines: bytes) -> list[str]:
    return [ln for ln in lines.decode().splitlines() if ln]


def test_wacz_stands_alone_with_revisit_originals(
    lib_with_revisit: Library, tmp_path: Path
) -> None:
    dest = tmp_path / "two.wacz"
    updates: list[ProgressUpdate] = []
    result = export(lib_with_revisit, Selection(collection="two"), dest, progress=updates.append)
    assert (result.pages, result.originals_added) == (2, 1)
    assert result.records == 3 and not result.problems
    assert updates[-1].fraction == 1.0
    with zipfile.ZipFile(dest) as zf:
        names = zf.namelist()
        assert names == [
            "archive/data.warc.gz",
            "indexes/index.cdx",
            "pages/pages.jsonl",
            "datapackage.json",
            "datapackage-digest.json",
        ]
        assert zf.getinfo("archive/data.warc.gz").compress_type == zipfile.ZIP_STORED
        package = json.loads(zf.read("datapackage.json"))
        assert package["wacz_version"] == "1.1.1"
        for res in package["resources"]:
            data = zf.read(res["path"])
            assert res["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert res["bytes"] == len(data)
        digest = json.loads(zf.read("datapackage-digest.json"))
        assert digest["hash"] == "sha256:" + hashlib.sha256(zf.read("datapackage.json")).hexdigest()
        warc = zf.read("archive/data.warc.gz")
        cdxj = _cdxj(zf.read("indexes/index.cdx"))
        pages = [json.loads(x) for x in zf.read("pages/pages.jsonl").splitlines()]
    # C-locale byte order
    assert cdxj == sorted(cdxj, key=str.encode)
    env = {**os.environ, "LC_ALL": "C"}
    sorted_by_sort = subprocess.run(
        ["sort"], input="\n".join(cdxj) + "\n", capture_output=True, text=True, env=env, check=True
    ).stdout
    assert sorted_by_sort.splitlines() == cdxj
    # the revisit's original response is inside the export, and offsets point at records
    (tmp_path / "x.warc.gz").write_bytes(warc)
    recs = {(r.rec_type, r.url): r for r in scan_records(tmp_path / "x.warc.gz")}
    assert ("revisit", "https://example.org/page0") in recs and (
        "response",
        "https://example.org/page0",
    ) in recs
    for line in cdxj:
        fields = json.loads(line.split(" ", 2)[2])
        offset, length = int(fields["offset"]), int(fields["length"])
        member = gzip.decompress(warc[offset : offset + length])
        assert fields["url"].encode() in member.split(b"\r\n\r\n", 1)[0]
    assert pages[0]["format"] == "json-pages-1.0"
    by_url = {p["url"]: p for p in pages[1:]}
    assert by_url["https://example.org/page0"]["title"] == "Page 0 of example.org"
    assert "word0" in by_url["https://example.org/page0"]["text"]
    assert by_url["https://example.org/page0"]["ts"] == "2024-06-01T10:00:00Z"


def test_folder_export(lib_with_revisit: Library, tmp_path: Path) -> None:
    dest = tmp_path / "out"
    result = export(lib_with_revisit, Selection(query="word1"), dest, fmt="folder")
    assert result.pages == 1
    assert sorted(p.name for p in dest.iterdir()) == [
        "README.txt",
        "archive",
        "index.cdxj",
        "pages.jsonl",
    ]
    cdxj = _cdxj((dest / "index.cdxj").read_bytes())
    assert [json.loads(c.split(" ", 2)[2])["url"] for c in cdxj] == [
        "https://example.org/img1.png",
        "https://example.org/page1",
    ]
    assert "archiver import" in (dest / "README.txt").read_text()
    assert not list(tmp_path.glob(".out.partial*"))


def test_refuses_existing_and_empty_selection(lib_with_revisit: Library, tmp_path: Path) -> None:
    dest = tmp_path / "x.wacz"
    dest.write_bytes(b"keep me")
    with pytest.raises(InputError, match="already exists"):
        export(lib_with_revisit, Selection(collection="one"), dest)
    assert dest.read_bytes() == b"keep me"
    with pytest.raises(InputError, match="nothing to export"):
        export(lib_with_revisit, Selection(query="nonexistentword"), tmp_path / "y.wacz")
    result = export(lib_with_revisit, Selection(collection="one"), dest, overwrite=True)
    assert result.pages == 2 and zipfile.is_zipfile(dest)


def test_cancelled_export_leaves_nothing(lib_with_revisit: Library, tmp_path: Path) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        export(lib_with_revisit, Selection(), tmp_path / "c.wacz", cancel=token)
    with pytest.raises(Cancelled):
        export(lib_with_revisit, Selection(), tmp_path / "c", fmt="folder", cancel=token)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["library", "one.warc.gz", "two.warc"]


def test_missing_source_file_is_reported(lib_with_revisit: Library, tmp_path: Path) -> None:
    conn = sqlite3.connect(lib_with_revisit.db_path)
    rel = conn.execute("SELECT path FROM files WHERE path LIKE '%two.warc'").fetchone()[0]
    conn.close()
    lib_with_revisit.abspath(rel).unlink()
    result = export(lib_with_revisit, Selection(collection="two"), tmp_path / "m.wacz")
    assert result.problems and "is not on this computer" in result.problems[0]
    assert result.records == 1  # the original, from collection one's file
