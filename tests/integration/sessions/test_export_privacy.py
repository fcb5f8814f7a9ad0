"""Exports of a collection captured with a profile: no Cookie, Authorization or Set-Cookie
header anywhere in the export's WARC unless asked, digests still right, the WACZ valid.

Both tests read one library and its exports (:func:`exports`), made once for the module.
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from archiver_app.cli import main
from tests.helpers.webserver import LocalServer
from tests.integration.sessions.site import BEARER, TYPED, LoginSite
from tests.integration.sessions.test_logins import write_cookies_txt

PRIVATE = ("cookie", "authorization", "set-cookie", "proxy-authorization", "set-cookie2")
WACZ_BIN = Path(sys.executable).parent / "wacz"


def _records(warc: bytes) -> list[tuple[str, str, dict[str, str], str]]:
    """(type, url, lower-cased HTTP header names -> values, payload digest) of each record;
    fails on any record whose block or payload digest does not match."""
    out = []
    for rec in ArchiveIterator(io.BytesIO(warc), check_digests=True):
        rec.content_stream().read()  # read it all so the digests are checked
        assert rec.digest_checker.passed is not False, (
            rec.rec_headers.get_header("WARC-Target-URI"),
            rec.digest_checker.problems,
        )
        headers: dict[str, str] = {}
        if rec.http_headers is not None:
            for name, value in rec.http_headers.headers:
                headers[name.lower()] = headers.get(name.lower(), "") + value
        out.append(
            (
                rec.rec_type,
                rec.rec_headers.get_header("WARC-Target-URI") or "",
                headers,
                rec.rec_headers.get_header("WARC-Payload-Digest") or "",
            )
        )
    return out


def _plain(data: bytes) -> bytes:
    """``data``, decompressed when it is gzip."""
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _wacz_warc(path: Path) -> bytes:
    with zipfile.ZipFile(path) as zf:
        return zf.read("archive/data.warc.gz")


@dataclass(frozen=True)
class Exports:
    kept: Path  # a WACZ with --keep-private-headers
    stripped: Path  # a WACZ without
    folder: Path  # a folder export without
    validated: subprocess.CompletedProcess[str]  # ``wacz validate`` of ``stripped``


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Exports:
    """A library with /private and /script-login captured in one run on a profile made from
    a cookies.txt (the requests carry the session cookie; /private's script sends an
    Authorization header, /script-login's a password three ways), exported three ways.
    The tests only read them."""
    tmp = tmp_path_factory.mktemp("exports")
    server = LocalServer().start()
    try:
        site = LoginSite(server)
        root, cookies = tmp / "lib", tmp / "cookies.txt"
        write_cookies_txt(site, cookies)
        lib = ["--library", str(root)]
        assert main([*lib, "profiles", "import-cookies", "uni", str(cookies)]) == 1  # a bad line
        pages = [site.url("/private"), site.url("/script-login")]
        assert main([*lib, "capture", "--profile", "uni", *pages]) == 0
    finally:
        server.stop()
    kept, stripped, folder = tmp / "kept.wacz", tmp / "shared.wacz", tmp / "shared-folder"
    assert main([*lib, "export", "--keep-private-headers", "-o", str(kept)]) == 0
    assert main([*lib, "export", "-o", str(stripped)]) == 0
    assert main([*lib, "export", "--format", "folder", "-o", str(folder)]) == 0
    run = subprocess.run(
        [str(WACZ_BIN), "validate", "-f", str(stripped)],
        capture_output=True,
        text=True,
        check=False,
    )
    return Exports(kept, stripped, folder, run)


def test_exports_leave_private_headers_out_unless_kept(exports: Exports) -> None:
    kept_records = _records(_wacz_warc(exports.kept))
    seen = {name for _t, _u, headers, _d in kept_records for name in headers}
    assert {"cookie", "set-cookie", "authorization"} <= seen  # the capture did carry them
    assert any(h.get("authorization") == BEARER for _t, _u, h, _d in kept_records)

    folder = exports.folder
    for warc in (_wacz_warc(exports.stripped), (folder / "archive" / "data.warc.gz").read_bytes()):
        records = _records(warc)
        assert len(records) == len(kept_records)
        for rec_type, url, headers, _digest in records:
            assert not set(headers) & set(PRIVATE), (rec_type, url, headers)
        text = gzip.decompress(warc)
        assert b"notes-key-42" not in text and b"sid=" not in text
        # the payloads are the same: same payload digests, record for record, but for the
        # three requests whose password the export blanks (the test below)
        changed = [
            (t, urlsplit(u).path)
            for (t, u, _h, d), (kt, ku, _kh, kd) in zip(records, kept_records, strict=True)
            if (t, u, d) != (kt, ku, kd)
        ]
        assert changed == [("request", "/api/session")] * 3
    run = exports.validated
    assert run.returncode == 0, run.stdout + run.stderr


def test_exports_blank_the_passwords_login_requests_sent(exports: Exports) -> None:
    """A page that logs in by script sends the password as a form, a multipart form and JSON:
    the library keeps what was sent; an export blanks the password fields, the records still
    valid (block and payload digests, WACZ validation)."""
    kept = exports.kept
    assert gzip.decompress(_wacz_warc(kept)).count(TYPED.encode()) == 3
    with zipfile.ZipFile(kept) as zf:  # the index keys each POST by its body
        assert TYPED.lower().encode() in zf.read("indexes/index.cdx").lower()

    stripped, folder = exports.stripped, exports.folder
    with zipfile.ZipFile(stripped) as zf:  # nowhere in the export: nor in its index
        for name in zf.namelist():
            assert TYPED.lower().encode() not in _plain(zf.read(name)).lower(), name
    for file in folder.rglob("*"):
        if file.is_file():
            assert TYPED.lower().encode() not in _plain(file.read_bytes()).lower(), file
    warc = _wacz_warc(stripped)
    text = gzip.decompress(warc)
    assert TYPED.encode() not in text
    assert b"user=reader&password=" in text
    assert b'"password":""' in text and b'"user":"reader"' in text
    assert b'name="pwd"\r\n\r\n\r\n' in text and b"user=reader" in text
    records = _records(warc)  # every block and payload digest checked
    assert len(records) == len(_records(_wacz_warc(kept)))
    posts = [h for t, u, h, _d in records if t == "request" and u.endswith("/api/session")]
    assert len(posts) == 3
    for rec in ArchiveIterator(io.BytesIO(warc)):
        if rec.rec_type == "request" and rec.http_headers.get_header("Content-Length"):
            body = rec.content_stream().read()
            assert int(rec.http_headers.get_header("Content-Length")) == len(body)
    run = exports.validated
    assert run.returncode == 0, run.stdout + run.stderr
