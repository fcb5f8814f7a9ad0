"""Resolving and serving archived responses from real WARC files in a real library."""

from __future__ import annotations

import shutil
import uuid

import pytest
from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.replay import (
    DamagedRecord,
    NotArchived,
    RecordUnavailable,
    RedirectLoop,
    Replayer,
    resolve,
)
from archiver_app.store.models import Copy, CopyState, Destination, File
from tests.helpers.archive import ArchiveWriter, at

PAGE = "https://example.org/page"


def _replayer(library: Library) -> Replayer:
    return Replayer.for_library(library)


def test_nearest_capture_in_time_and_newest_by_default(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(PAGE, "<p>2020</p>", at=at(2020))
    w.response(PAGE, "<p>2022</p>", at=at(2022))
    w.response(PAGE, "<p>2024</p>", at=at(2024))
    w.commit()
    r = _replayer(library)
    assert r.serve(PAGE, "20200601").body == b"<p>2020</p>"
    assert r.serve(PAGE, "2021").body == b"<p>2022</p>"  # 365 days before, 366 after 2020
    assert r.serve(PAGE, "20211231").body == b"<p>2022</p>"
    assert r.serve(PAGE, at(2030)).body == b"<p>2024</p>"
    assert r.serve(PAGE).body == b"<p>2024</p>"
    assert r.serve(PAGE, "1990").body == b"<p>2020</p>"
    assert resolve(library, PAGE, "2022").record.ts.startswith("2022")
    assert r.serve(PAGE).match == "exact"


def test_not_archived(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(PAGE, "x", at=at(2020))
    w.commit()
    with pytest.raises(NotArchived, match="not in the archive"):
        _replayer(library).serve("https://other.example/")
    # An HTML page with a different meaningful query is not the same page.
    with pytest.raises(NotArchived):
        _replayer(library).serve(PAGE + "?id=7")


def test_self_redirect_between_spellings_is_passed_over(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(
        "http://example.org/page",
        "",
        at=at(2024, 1, 1, 10),
        status=301,
        headers=[("Location", "https://example.org/page")],
    )
    w.response(PAGE, "<p>secure</p>", at=at(2024, 1, 1, 9))
    w.commit()
    r = _replayer(library)
    first = r.serve("http://example.org/page", "2024010110")
    assert first.status == 301 and first.location == PAGE
    assert r.serve(PAGE, "2024010110").body == b"<p>secure</p>"
    assert r.redirect_chain("http://example.org/page", "2024010110") == [
        "http://example.org/page",
        PAGE,
    ]


def test_fuzzy_cache_busters_tracking_and_jsonp(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(
        "https://example.org/api?q=cats&_=1700000000001&callback=jQuery111_1700",
        'jQuery111_1700({"cats": 3})',
        at=at(2024),
        mime="application/javascript",
    )
    w.response("https://example.org/a?utm_source=x&id=4", "<p>id 4</p>", at=at(2024))
    w.commit()
    r = _replayer(library)
    resp = r.serve("https://example.org/api?q=cats&callback=jQuery999_1800&_=1800000000000")
    assert resp.match == "fuzzy"
    assert resp.body == b'jQuery999_1800({"cats": 3})'
    assert resp.header("Content-Length") == str(len(resp.body))
    assert r.serve("https://example.org/a?id=4&utm_campaign=y").body == b"<p>id 4</p>"
    with pytest.raises(NotArchived):  # a meaningful parameter differs, and it is a page
        r.serve("https://example.org/a?id=5")


def test_subresources_fall_back_to_the_nearest_query(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response("https://cdn.example/app.js?v=1.2&lang=en", "v12en", at=at(2024), mime="text/js")
    w.response("https://cdn.example/app.js?v=1.3&lang=fr", "v13fr", at=at(2024), mime="text/js")
    w.response("https://cdn.example/pic?w=100", b"\x89PNG", at=at(2024), mime="image/png")
    w.commit()
    r = _replayer(library)
    resp = r.serve("https://cdn.example/app.js?v=1.4&lang=fr")
    assert (resp.body, resp.match) == (b"v13fr", "nearest-query")
    assert r.serve("https://cdn.example/pic?w=200").body == b"\x89PNG"  # known image mime


def test_revisits_serve_the_original_payload(library: Library) -> None:
    w = ArchiveWriter(library)
    original = w.response(PAGE, "<p>same</p>", at=at(2020))
    w.revisit(PAGE, original, at=at(2023))
    w.response("https://example.org/other", "<p>same</p>", at=at(2019))  # same digest
    ids = w.commit()
    r = _replayer(library)
    resp = r.serve(PAGE, "2023")
    assert resp.body == b"<p>same</p>" and resp.ts.startswith("2023")
    assert resp.status == 200 and resp.record_id == ids[1]
    # An explicit revisit_of_id wins over the digest.
    with library.write() as s:
        s.connection().exec_driver_sql(
            "UPDATE records SET revisit_of_id = ? WHERE id = ?", (ids[0], ids[1])
        )
    assert Replayer.for_library(library).serve(PAGE, "2023").body == b"<p>same</p>"


def test_encoded_bodies_are_decoded_and_hop_by_hop_headers_dropped(library: Library) -> None:
    w = ArchiveWriter(library)
    extra = [
        ("Connection", "keep-alive"),
        ("Transfer-Encoding", "identity"),
        ("Content-Security-Policy", "default-src https://example.org"),
        ("X-Custom", "kept"),
    ]
    w.response(PAGE, "<p>gzipped</p>" * 50, at=at(2024), encoding="gzip", headers=extra)
    w.response(PAGE + "2", "<p>deflated</p>", at=at(2024), encoding="deflate")
    w.commit()
    r = _replayer(library)
    resp = r.serve(PAGE)
    assert resp.body == b"<p>gzipped</p>" * 50
    names = {k.lower() for k, _ in resp.headers}
    assert not names & {"content-encoding", "connection", "transfer-encoding"}
    assert "content-security-policy" not in names
    assert resp.header("X-Custom") == "kept"
    assert resp.header("Content-Length") == str(len(resp.body))
    assert r.serve(PAGE + "2").body == b"<p>deflated</p>"


def test_range_requests(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response("https://example.org/v.mp4", bytes(range(100)), at=at(2024), mime="video/mp4")
    w.commit()
    r = _replayer(library)
    part = r.serve("https://example.org/v.mp4", range_header="bytes=10-19")
    assert part.status == 206 and part.body == bytes(range(10, 20))
    assert part.header("Content-Range") == "bytes 10-19/100"
    assert r.serve("https://example.org/v.mp4", range_header="bytes=-5").body == bytes(
        range(95, 100)
    )
    assert r.serve("https://example.org/v.mp4", range_header="bytes=90-").body == bytes(
        range(90, 100)
    )
    bad = r.serve("https://example.org/v.mp4", range_header="bytes=200-300")
    assert bad.status == 416 and bad.header("Content-Range") == "bytes */100"
    assert r.serve("https://example.org/v.mp4", range_header="lines=1-2").status == 200


def test_redirect_loop_is_detected(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response("https://a.example/", "", at=at(2024), status=302, headers=[("Location", "/b")])
    w.response("https://a.example/b", "", at=at(2024), status=302, headers=[("Location", "/")])
    w.commit()
    r = _replayer(library)
    assert r.serve("https://a.example/").location == "https://a.example/b"
    with pytest.raises(RedirectLoop, match="loop") as info:
        r.redirect_chain("https://a.example/")
    assert info.value.chain == ["https://a.example/", "https://a.example/b", "https://a.example/"]


def test_truncated_file_and_truncated_capture(library: Library) -> None:
    w = ArchiveWriter(library, "imports/cut.warc.gz")
    w.response(PAGE, "<p>whole</p>", at=at(2020))
    w.response(PAGE + "/big", b"x" * 5000, at=at(2020), truncated="length")
    last = w.response("https://example.org/last", "y" * 20000, at=at(2020))
    w.commit()
    r = _replayer(library)
    assert r.serve(PAGE + "/big").truncated == "length"
    with (library.root / "imports/cut.warc.gz").open("r+b") as fh:
        fh.truncate(last.offset + last.length // 2)
    with pytest.raises(DamagedRecord, match="truncated"):
        Replayer.for_library(library).serve("https://example.org/last")
    assert Replayer.for_library(library).serve(PAGE).body == b"<p>whole</p>"


def test_missing_file_names_the_drive_and_reads_a_mounted_copy(library: Library, tmp_path) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/snap/capture.warc.gz")
    w.response(PAGE, "<p>on the drive</p>", at=at(2024))
    w.commit()
    drive = tmp_path / "drive"
    held = drive / "Archiver" / library.id / "collections/default/2024/01/snap/capture.warc.gz"
    held.parent.mkdir(parents=True)
    shutil.move(library.root / "collections/default/2024/01/snap/capture.warc.gz", held)
    with library.write() as s:
        file_id = s.scalar(select(File.id))
        dest = Destination(uuid=str(uuid.uuid4()), label="Blue Passport", last_mount_path=None)
        s.add(dest)
        s.flush()
        s.add(Copy(file_id=file_id, destination_id=dest.id, state=CopyState.PRESENT))
    with pytest.raises(RecordUnavailable, match="Blue Passport") as info:
        _replayer(library).serve(PAGE)
    assert info.value.drives == ["Blue Passport"]
    assert info.value.kind == "missing-file"
    with library.write() as s:
        s.scalars(select(Destination)).one().last_mount_path = str(drive)  # plugged in
    assert _replayer(library).serve(PAGE).body == b"<p>on the drive</p>"


def test_cache_serves_hot_lookups_and_sees_new_captures(library: Library) -> None:
    w = ArchiveWriter(library, "imports/one.warc.gz")
    w.response(PAGE, "<p>old</p>", at=at(2020))
    w.commit()
    r = _replayer(library)
    assert r.serve(PAGE).body == b"<p>old</p>"
    hits = r._bodies.hits
    assert r.serve(PAGE).body == b"<p>old</p>"
    assert r._bodies.hits == hits + 1
    w2 = ArchiveWriter(library, "imports/two.warc.gz")
    w2.response(PAGE, "<p>new</p>", at=at(2025))
    w2.commit()
    assert r.serve(PAGE).body == b"<p>new</p>"


def test_timeline_lists_every_capture_of_the_group(library: Library) -> None:
    w = ArchiveWriter(library)
    w.response(PAGE, "a", at=at(2021), page=True)
    w.response("http://www.example.org/page", "b", at=at(2022), page=True)
    w.response(PAGE + "?x=1", "c", at=at(2023), page=True)
    w.commit()
    caps = _replayer(library).captures_of(PAGE + "#frag")
    assert [c.ts[:4] for c in caps] == ["2021", "2022"]
    assert all(c.snapshot_id for c in caps)
    # Without snapshot rows (a bare imported WARC) the records give the timeline.
    w2 = ArchiveWriter(library, "imports/bare.warc.gz")
    w2.response("https://bare.example/", "x", at=at(2020))
    w2.response("https://bare.example/", "y", at=at(2021))
    w2.commit()
    assert len(_replayer(library).captures_of("https://bare.example/")) == 2


def test_the_exact_address_wins_over_others_its_lookup_key_folds_in(library: Library) -> None:
    """``q=a+b`` and ``q=a%2Bb``, ``a%2Fb`` and ``a/b``, ``?b=2&a=1`` and ``?a=1&b=2`` share
    a lookup key but are different addresses: each serves its own capture, however near
    in time the other is; the key still finds a capture of the other spelling when the
    address itself was never captured."""
    pairs = [
        ("https://echo.example/echo?q=a+b", "https://echo.example/echo?q=a%2Bb"),
        ("https://echo.example/echo/a%2Fb", "https://echo.example/echo/a/b"),
        ("https://echo.example/echo?b=2&a=1", "https://echo.example/echo?a=1&b=2"),
    ]
    w = ArchiveWriter(library)
    for older, newer in pairs:
        w.response(older, older, at=at(2020), mime="text/plain")
        w.response(newer, newer, at=at(2024), mime="text/plain")
    w.response("https://echo.example/only?y=1&x=2", "folded", at=at(2024), mime="text/plain")
    w.commit()
    r = _replayer(library)
    for older, newer in pairs:
        assert r.serve(older).body == older.encode()  # newer, but another address
        assert r.serve(newer, "2020").body == newer.encode()
        assert r.serve(older.replace("https:", "http:")).body == older.encode()
    assert r.serve("https://echo.example/only?x=2&y=1").body == b"folded"


def test_a_page_s_own_capture_of_a_file_comes_first(library: Library) -> None:
    """A subresource asked for a page replayed from capture ``capture``: that capture's
    own record, even when others (a crawl's, the file captured alone) are nearer in
    time, or more than the nearest few lie between; else the nearest in time."""
    from sqlalchemy import text

    css = "https://example.org/site.css?v=1"
    w = ArchiveWriter(library)
    w.response(PAGE, "<p>page</p>", at=at(2024), page=True)
    own = w.response(css, "own", at=at(2024, 1, 1, 9), mime="text/css")
    for hour in range(1, 9):  # captured by others in between
        w.response(css, f"other {hour}", at=at(2024, 1, 1, hour), mime="text/css")
    w.commit()
    with library.write() as s:
        conn = s.connection()
        page = conn.execute(text("SELECT id FROM snapshots")).scalar_one()
        conn.execute(
            text("UPDATE records SET snapshot_id = :p WHERE ts = :t"), {"p": page, "t": own.ts}
        )
    r = _replayer(library)
    assert r.serve(css, at(2024)).body == b"other 1"  # no page named: the nearest
    assert r.serve(css, at(2024), capture=page).body == b"own"
    assert r.serve(css + "&_=123", at(2024), capture=page).body == b"own"  # fuzzy too
    assert r.serve(css, at(2024), capture=page + 1).body == b"other 1"  # none of its own


def test_a_cut_off_whole_answer_is_served_from_parts_that_cover_it(library: Library) -> None:
    """A sound captured by its own address before captures kept it whole: the player's
    206 part holds all of it and the page's 200 is empty, cut off by time. Replay serves
    the whole file (not an empty answer) and its ranges."""
    sound, data = "https://example.org/tone.wav", bytes(range(256)) * 10
    w = ArchiveWriter(library)
    part = [("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")]
    w.response(sound, data, at=at(2024), status=206, mime="audio/x-wav", headers=part)
    w.response(sound, b"", at=at(2024), mime="audio/x-wav", truncated="time")
    w.response(PAGE, b"", at=at(2024), truncated="time")  # no parts: stays as it was
    w.commit()
    r = _replayer(library)
    whole = r.serve(sound)
    assert (whole.status, whole.body, whole.truncated) == (200, data, None)
    assert whole.header("Content-Length") == str(len(data))
    ranged = r.serve(sound, range_header="bytes=100-199")
    assert (ranged.status, ranged.body) == (206, data[100:200])
    assert (r.serve(PAGE).body, r.serve(PAGE).truncated) == (b"", "time")
