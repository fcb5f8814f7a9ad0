"""Exports: WACZ structure and hashes, plain folders, sorted CDXJ, revisits resolved,
temporary name until complete."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from warcio.archiveiterator import ArchiveIterator

from archiver_app.errors import InputError
from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from archiver_app.warc.scan import scan_records
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.warcs import Resp, html_page, site, warcio_check, write_warc
from tests.unit.export.zipcheck import ZIP64_ID, assert_headers_agree, extra_fields


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
        info = zf.getinfo("archive/data.warc.gz")
        assert info.compress_type == zipfile.ZIP_STORED
        # no zip64 under 4 GiB, so the local headers and the central directory agree
        # (ReplayWeb.page reads records 20 bytes early otherwise)
        assert [m.local_extra for m in assert_headers_agree(dest)] == [b""] * 5
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


@pytest.mark.parametrize("over", [True, False], ids=["past-limit", "near-limit"])
def test_zip64_in_local_header_and_central_directory_alike(
    lib_with_revisit: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, over: bool
) -> None:
    """Past the zip64 limit the WARC's sizes go in the zip64 field of both headers; near it
    (spooled first, as a WARC that might pass it) in neither. The limit is lowered to a few
    KiB so that a small export crosses it; zipfile reads the same constant."""
    first = export(lib_with_revisit, Selection(collection="two"), tmp_path / "first.wacz")
    with zipfile.ZipFile(first.path) as zf:
        others = max(i.file_size for i in zf.infolist() if not i.filename.startswith("archive/"))
    assert others * 1.05 < first.bytes - 1  # only the WARC can cross the lowered limit
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", first.bytes - 1 if over else first.bytes + 10)
    dest = tmp_path / "two.wacz"
    result = export(lib_with_revisit, Selection(collection="two"), dest)
    found = {m.name: m for m in assert_headers_agree(dest)}
    warc = found["archive/data.warc.gz"]
    assert (ZIP64_ID in extra_fields(warc.local_extra)) is over
    assert not list(tmp_path.glob(".two.wacz.partial*"))  # the spooled WARC is gone
    with zipfile.ZipFile(dest) as zf:
        assert zf.testzip() is None
        data = zf.read("archive/data.warc.gz")
    assert len(data) == result.bytes == first.bytes
    assert dest.read_bytes()[warc.data_offset : warc.data_offset + len(data)] == data


def test_a_warc_larger_than_foreseen_is_written_again_sized_first(
    lib_with_revisit: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The estimate said the WARC could not reach the zip64 limit, but it does: the
    stream stops before the limit and the WACZ is written again with the WARC sized
    first, zip64 in both headers (never a local header the central directory lacks)."""
    from archiver_app.export import writer

    first = export(lib_with_revisit, Selection(collection="two"), tmp_path / "first.wacz")
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", first.bytes - 1)
    monkeypatch.setattr(writer, "_may_reach_zip64", lambda _plan: False)
    updates: list[ProgressUpdate] = []
    dest = tmp_path / "two.wacz"
    result = export(lib_with_revisit, Selection(collection="two"), dest, progress=updates.append)
    assert (result.bytes, result.records, result.pages) == (first.bytes, first.records, 2)
    warc = {m.name: m for m in assert_headers_agree(dest)}["archive/data.warc.gz"]
    assert ZIP64_ID in extra_fields(warc.local_extra)
    assert updates[-1].fraction == 1.0
    assert not [p.name for p in tmp_path.iterdir() if ".partial" in p.name]
    with zipfile.ZipFile(dest) as zf:
        assert zf.testzip() is None


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
    [line] = result.problems  # one line for the file, not one per record
    assert line.startswith(f"{rel} is not on this computer: ") and " left out (" in line
    assert result.records == 1  # the original, from collection one's file


def test_never_writes_over_or_into_the_library(lib_with_revisit: Library, tmp_path: Path) -> None:
    root = lib_with_revisit.root
    for dest, fmt in [
        (tmp_path, "folder"),  # the folder holding the library
        (root, "folder"),
        (root / "export", "folder"),
        (root / "archive.wacz", "wacz"),
        (lib_with_revisit.db_path, "wacz"),
    ]:
        with pytest.raises(InputError, match="library folder"):
            export(lib_with_revisit, Selection(), dest, fmt=fmt, overwrite=True)
    # a link to the library is the library
    (tmp_path / "shortcut").symlink_to(root)
    with pytest.raises(InputError, match="inside the library folder"):
        export(lib_with_revisit, Selection(), tmp_path / "shortcut", fmt="folder", overwrite=True)
    assert lib_with_revisit.db_path.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "library",
        "one.warc.gz",
        "shortcut",
        "two.warc",
    ]
    assert export(lib_with_revisit, Selection(collection="one"), tmp_path / "ok.wacz").pages == 2


def test_overwrite_replaces_only_an_earlier_export_or_an_empty_folder(
    lib_with_revisit: Library, tmp_path: Path
) -> None:
    dest = tmp_path / "out"
    export(lib_with_revisit, Selection(collection="one"), dest, fmt="folder")
    result = export(lib_with_revisit, Selection(), dest, fmt="folder", overwrite=True)
    assert result.pages == 4 and "4 pages" in (dest / "README.txt").read_text()
    assert not list(tmp_path.glob(".out.*"))  # neither the new one's nor the old one's
    (dest / "notes.txt").write_text("mine")  # no longer only an export of ours
    with pytest.raises(InputError, match="not an earlier Archiver export"):
        export(lib_with_revisit, Selection(), dest, fmt="folder", overwrite=True)
    assert (dest / "notes.txt").read_text() == "mine"
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(InputError, match="not an earlier Archiver export"):
        export(lib_with_revisit, Selection(), photos, fmt="folder", overwrite=True)
    assert (photos / "cat.jpg").exists()
    with pytest.raises(InputError, match="is a folder"):
        export(lib_with_revisit, Selection(), photos, overwrite=True)
    with pytest.raises(InputError, match="is not a folder"):
        export(lib_with_revisit, Selection(), tmp_path / "two.warc", fmt="folder", overwrite=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert export(lib_with_revisit, Selection(), empty, fmt="folder", overwrite=True).pages == 4
    assert (empty / "index.cdxj").is_file()


def test_never_replaces_a_warc_the_library_links_to(library: Library, tmp_path: Path) -> None:
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    warc = write_warc(linked / "a.warc.gz", site(1))
    import_warc_file(library, warc, link=True)
    for dest, fmt in [(linked, "folder"), (warc, "wacz")]:
        with pytest.raises(InputError, match="reads in place"):
            export(library, Selection(), dest, fmt=fmt, overwrite=True)
    assert warc.is_file()


def _exported_urls(path: Path) -> list[str]:
    return [r.url for r in scan_records(path) if r.rec_type == "response"]


def test_records_before_a_files_first_page_and_pageless_files_are_exported(
    library: Library, tmp_path: Path
) -> None:
    css = Resp("https://o.example/style.css", b"body{}", mime="text/css")
    png = Resp("https://o.example/logo.png", b"\x89PNG....", mime="image/png")
    home = Resp("https://o.example/", html_page("Home", "hello harbour"))
    about = Resp("https://o.example/about", html_page("About", "lighthouse keepers"))
    font = Resp("https://o.example/font.woff", b"wOFF", mime="font/woff")
    other = Resp("https://p.example/x.js", b"1", mime="text/javascript")
    # a browser wrote the page's resources before the page itself
    import_warc_file(
        library, write_warc(tmp_path / "a.warc.gz", [css, png, home, about]), collection="c"
    )
    import_warc_file(library, write_warc(tmp_path / "b.warc", [font], gz=False), collection="c")
    import_warc_file(library, write_warc(tmp_path / "d.warc.gz", [other]), collection="d")

    whole = export(library, Selection(collection="c"), tmp_path / "c", fmt="folder")
    assert (whole.records, whole.pages) == (5, 2) and not whole.problems
    # page by page, each page's record first (an importer gives a record to the page before
    # it); a file with no page (in collection c's folder) before them
    assert _exported_urls(tmp_path / "c" / "archive" / "data.warc.gz") == [
        font.url,
        home.url,
        css.url,
        png.url,
        about.url,
    ]
    cdxj = _cdxj((tmp_path / "c" / "index.cdxj").read_bytes())
    assert len(cdxj) == 5
    everything = export(library, Selection(), tmp_path / "all", fmt="folder")
    assert everything.records == 6
    assert other.url in _exported_urls(tmp_path / "all" / "archive" / "data.warc.gz")
    only_pageless = export(library, Selection(collection="d"), tmp_path / "d", fmt="folder")
    assert (only_pageless.records, only_pageless.pages) == (1, 0)
    # a search: the pages it finds with their resources; those before the file's first page
    # go with that page, after it
    export(library, Selection(query="harbour"), tmp_path / "home", fmt="folder")
    assert _exported_urls(tmp_path / "home" / "archive" / "data.warc.gz") == [
        home.url,
        css.url,
        png.url,
    ]
    export(library, Selection(query="lighthouse"), tmp_path / "about", fmt="folder")
    assert _exported_urls(tmp_path / "about" / "archive" / "data.warc.gz") == [about.url]


def _arc(path: Path, records: list[tuple[str, bytes]], *, gz: bool = False) -> Path:
    """An ARC 1.0 file: the filedesc header, then one response per (url, html)."""
    desc = b"1 0 test\nURL IP-address Archive-date Content-type Archive-length\n"
    members = [
        b"filedesc://%s 0.0.0.0 19990101120000 text/plain %d\n%s\n"
        % (path.name.encode(), len(desc), desc)
    ]
    for url, html in records:
        body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + html
        members.append(
            b"%s 1.2.3.4 19990101120000 text/html %d\n%s\n" % (url.encode(), len(body), body)
        )
    path.write_bytes(b"".join(gzip.compress(m) if gz else m for m in members))
    return path


def test_arc_records_are_exported_as_warc(library: Library, tmp_path: Path) -> None:
    import_warc_file(
        library,
        _arc(tmp_path / "old.arc", [("http://old.example/", html_page("Old", "hello old web"))]),
        collection="old",
    )
    import_warc_file(
        library,
        _arc(
            tmp_path / "older.arc.gz",
            [("http://older.example/", html_page("Older", "older web"))],
            gz=True,
        ),
        collection="old",
    )
    result = export(library, Selection(collection="old"), tmp_path / "old.wacz")
    assert (result.records, result.pages) == (4, 2) and not result.problems
    with zipfile.ZipFile(tmp_path / "old.wacz") as zf:
        warc = zf.read("archive/data.warc.gz")
        cdxj = _cdxj(zf.read("indexes/index.cdx"))
    path = tmp_path / "data.warc.gz"
    path.write_bytes(warc)
    check = warcio_check(path)
    assert check.returncode == 0 and "digest pass" in check.stdout
    with path.open("rb") as fh:
        formats = [(r.format, r.rec_type, r.rec_headers.protocol) for r in ArchiveIterator(fh)]
    assert formats == [  # the files' headers first: they belong to no page
        ("warc", "warcinfo", "WARC/1.1"),
        ("warc", "warcinfo", "WARC/1.1"),
        ("warc", "response", "WARC/1.1"),
        ("warc", "response", "WARC/1.1"),
    ]
    # the index points at the converted records: exact offsets and lengths, their digests
    assert len(cdxj) == 2
    for line in cdxj:
        fields = json.loads(line.split(" ", 2)[2])
        offset, length = int(fields["offset"]), int(fields["length"])
        with gzip.GzipFile(fileobj=io.BytesIO(warc[offset : offset + length])) as member:
            recs = [
                (r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                for r in ArchiveIterator(member)
            ]
        assert len(recs) == 1 and recs[0][0] == fields["url"]
        assert b"<title>Old" in recs[0][1]
        assert (
            fields["digest"]
            == "sha1:" + base64.b32encode(hashlib.sha1(recs[0][1]).digest()).decode()
        )
        assert (
            zlib.decompressobj(31)
            .decompress(warc[offset : offset + length])
            .startswith(b"WARC/1.1\r\n")
        )
    # a folder export converts the same way
    export(library, Selection(query="older"), tmp_path / "older", fmt="folder")
    with (tmp_path / "older" / "archive" / "data.warc.gz").open("rb") as fh:
        assert [r.format for r in ArchiveIterator(fh)] == ["warc", "warc"]


def test_a_damaged_arc_record_is_reported_and_left_out(library: Library, tmp_path: Path) -> None:
    pages = [("http://old.example/", html_page("Old", "hello")), ("http://old.example/b", b"b")]
    import_warc_file(library, _arc(tmp_path / "old.arc", pages), collection="old")
    conn = sqlite3.connect(library.db_path)
    rel, offset = conn.execute(
        "SELECT f.path, r.offset FROM records r JOIN files f ON f.id = r.file_id "
        "WHERE r.url = 'http://old.example/b'"
    ).fetchone()
    conn.close()
    with library.abspath(rel).open("r+b") as fh:  # its header line no longer parses
        fh.seek(offset)
        fh.write(b"x" * 40)
    # damaged as it came in (its capture-time digest is of these bytes), not after: an
    # export refuses a file altered after capture (test_as_captured.py)
    data = library.abspath(rel).read_bytes()
    with sqlite3.connect(library.db_path) as conn:
        conn.execute(
            "UPDATE files SET origin_sha256 = ?, sha256 = ? WHERE path = ?",
            (hashlib.sha256(data).hexdigest(), hashlib.sha256(data).hexdigest(), rel),
        )
    conn.close()
    result = export(library, Selection(collection="old"), tmp_path / "old.wacz")
    assert result.records == 2 and len(result.problems) == 1
    assert result.problems[0].startswith("http://old.example/b: the ARC record cannot be read")
    with zipfile.ZipFile(tmp_path / "old.wacz") as zf:
        warc = zf.read("archive/data.warc.gz")
    (tmp_path / "data.warc.gz").write_bytes(warc)
    assert warcio_check(tmp_path / "data.warc.gz").returncode == 0
    with (tmp_path / "data.warc.gz").open("rb") as fh:
        assert [r.rec_type for r in ArchiveIterator(fh)] == ["warcinfo", "response"]


def test_a_folder_export_imports_back_with_its_error_pages(
    library: Library, tmp_path: Path
) -> None:
    """A capture of a 404 is a page the export lists (pages.jsonl); importing the folder, or
    its archive/data.warc.gz, kept only the 2xx pages (the records decided alone)."""
    w = ArchiveWriter(library, "collections/default/2025/01/e/capture.warc.gz")
    w.response("https://site.example/", "<title>Home</title><p>home</p>", at=at(2025), page=True)
    w.response("https://site.example/gone", "<title>404</title>", at=at(2025), status=404,
               page=True)  # fmt: skip
    w.commit()
    dest = tmp_path / "out"
    assert export(library, Selection(), dest, fmt="folder").pages == 2
    for n, source in enumerate([dest, dest / "archive" / "data.warc.gz"]):
        with Library.open(tmp_path / f"again{n}") as again:
            import_paths(again, [source])
            with again.session() as s:
                got = sorted(s.execute(select(Snapshot.url, Snapshot.http_status)).all())
        assert got == [("https://site.example/", 200), ("https://site.example/gone", 404)]


def test_an_export_of_a_few_large_records_stops_when_cancelled(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancel was looked at every 200 records only: an export of a few videos copied every
    one of them after Cancel. It is looked at again once some megabytes were copied."""
    from archiver_app.export import writer

    w = ArchiveWriter(library, "collections/default/2025/01/v/capture.warc.gz")
    w.response("https://v.example/", "<title>Videos</title>", at=at(2025), page=True)
    for i in range(4):
        body = os.urandom(9 << 20)  # a video opened as a page of its own
        w.response(f"https://v.example/{i}.mp4", body, at=at(2025), mime="video/mp4", page=True)
    w.commit()
    token = CancelToken()
    copied: list[int] = []

    def copy_then_cancel(*args: Any, **kwargs: Any) -> Any:
        print("CALL", args[1])
        copied.append(args[1])  # the record's length
        token.cancel()  # the user presses Cancel as the first record is copied
        return copy_record(*args, **kwargs)

    copy_record = writer.copy_record
    monkeypatch.setattr(writer, "copy_record", copy_then_cancel)
    with pytest.raises(Cancelled):
        export(library, Selection(), tmp_path / "v.wacz", cancel=token)
    assert len(copied) < 5 and sum(copied) < 20 << 20, copied  # stopped after a record or two
    assert not (tmp_path / "v.wacz").exists()
