"""Other tools' WARCs and WACZs in, our WACZ out, and back: the round trip of issue 5.

One realistic test (it starts pywb): warcio records a small local site, py-wacz packs it,
both are imported and compared with ``warcio index``; then our WACZ export passes
``wacz validate``, pywb replays its pages on 127.0.0.1, and importing it into a fresh
library gives the same records.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.export import Selection, export
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.search import Query, search
from archiver_app.warc.reader import read_record_at
from tests.helpers.replay_tools import get, pywb
from tests.helpers.webserver import LocalServer

BIN = Path(sys.executable).parent
PAGES = {
    "/": "<html lang='en'><head><title>Home of the otters</title></head><body>"
    "<p>otters swim in the estuary</p><img src='/logo.png'></body></html>",
    "/about": "<html><head><title>About</title></head><body>"
    "<p>volunteers count otters every spring</p></body></html>",
}
LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _record_with_warcio(server: LocalServer, dest: Path) -> None:
    script = (
        "import sys\n"
        "from warcio.capture_http import capture_http\n"
        "import requests\n"
        "with capture_http(sys.argv[1]):\n"
        "    for url in sys.argv[2:]:\n"
        "        requests.get(url, timeout=10)\n"
    )
    urls = [server.url(p) for p in ("/", "/about", "/logo.png")]
    subprocess.run([sys.executable, "-c", script, str(dest), *urls], check=True, timeout=60)


def _warcio_index(path: Path) -> list[dict[str, str]]:
    out = subprocess.run(
        [
            str(BIN / "warcio"),
            "index",
            "-f",
            "warc-type,warc-target-uri,offset,length,warc-payload-digest",
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(x) for x in out.splitlines() if x.strip()]


def _records(lib: Library) -> list[tuple[str, str, str | None]]:
    with lib.engine.connect() as conn:
        from sqlalchemy import text

        rows = conn.execute(
            text("SELECT record_type, url, digest FROM records WHERE snapshot_id IS NOT NULL")
        ).all()
    return sorted((r[0], r[1], r[2]) for r in rows)


@pytest.mark.slow
def test_other_tools_in_and_round_trip_out(tmp_path: Path, local_server: LocalServer) -> None:
    for path, body in PAGES.items():
        local_server.add_static(path, body)
    local_server.add_static("/logo.png", LOGO, content_type="image/png")
    warc = tmp_path / "site.warc.gz"
    _record_with_warcio(local_server, warc)
    wacz = tmp_path / "site.wacz"
    subprocess.run(
        [str(BIN / "wacz"), "create", "-f", "-o", str(wacz), "--detect-pages", "--text", str(warc)],
        check=True,
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
    )

    # --- other tools' files in, compared with warcio index
    lib = Library.open(tmp_path / "lib")
    report = import_paths(lib, [warc], collection="warcio")
    [got] = report.outcomes
    expected = _warcio_index(warc)
    assert got.state is OutcomeState.IMPORTED and got.records == len(expected) == 6
    assert got.pages == 2
    with lib.engine.connect() as conn:
        from sqlalchemy import text

        rows = conn.execute(
            text(
                "SELECT r.record_type, r.url, r.offset, r.length, r.digest, f.path "
                "FROM records r JOIN files f ON f.id = r.file_id ORDER BY r.offset"
            )
        ).all()
    assert [(r[0], r[1], str(r[2]), str(r[3])) for r in rows] == [
        (e["warc-type"], e["warc-target-uri"], e["offset"], e["length"]) for e in expected
    ]
    logo = next(r for r in rows if r[1].endswith("/logo.png") and r[0] == "response")
    assert read_record_at(lib.abspath(logo[5]), logo[2], logo[3]).payload == LOGO
    wacz_out = import_paths(lib, [wacz], collection="wacz").outcomes[0]
    # py-wacz's WARC is the same file: recognised, not indexed twice
    assert wacz_out.state is OutcomeState.SKIPPED, wacz_out
    assert [h.title for h in search(lib, Query("otters estuary"))] == ["Home of the otters"]
    # ... and on its own, py-wacz's WACZ verifies and its pages list makes the pages
    with Library.open(tmp_path / "pywacz") as other:
        from_wacz = import_paths(other, [wacz]).outcomes[0]
        assert from_wacz.state is OutcomeState.IMPORTED, from_wacz
        assert from_wacz.records == len(expected) and from_wacz.pages == 2
        assert _records(other) == _records(lib)

    # --- our WACZ out: wacz validate, pywb replay
    ours = tmp_path / "export.wacz"
    result = export(lib, Selection(collection="warcio"), ours)
    assert result.pages == 2 and not result.problems
    check = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(ours)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "valid" in check.stdout

    with pywb(ours, tmp_path / "pywb") as base:
        for path, body in PAGES.items():  # every page, byte for byte
            assert get(f"{base}2030id_/{local_server.url(path)}") == body.encode(), path
        assert get(f"{base}2030id_/{local_server.url('/logo.png')}") == LOGO

    # --- and back in: a fresh library gets the same records
    fresh = Library.open(tmp_path / "fresh")
    back = import_paths(fresh, [ours]).outcomes[0]
    assert back.state is OutcomeState.IMPORTED and back.pages == 2
    assert _records(fresh) == _records(lib)
    lib.close()
    fresh.close()
