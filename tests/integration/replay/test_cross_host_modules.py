"""A page captured by real Chromium whose worker and modules come from another host replays
in the app offline: the worker's ``importScripts()`` and ``fetch()``, a literal and a
computed ``import()``, and a module named through an import map, all of the second host."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.exceptions import TimeoutError
from pytestqt.qtbot import QtBot

from archiver_app.capture.engine import Capturer, PageRules
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.gui_fixtures import dispose, run_js
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Cross-host modules</title>
<script type="importmap">{{"imports": {{"mapped": "{other}/mapped.mjs"}}}}</script>
</head><body><p id="worker">-</p><p id="dynamic">-</p><p id="computed">-</p>
<p id="mapped">-</p>
<script type="module">import {{ v }} from 'mapped';
document.getElementById('mapped').textContent = v;</script>
<script>
const show = (id) => (v) => {{ document.getElementById(id).textContent = v; }};
new Worker('/worker.js').onmessage = (e) => show('worker')(e.data);
import('{other}/dynamic.mjs').then((m) => show('dynamic')(m.v));
const other = '{other}';
import(other + '/computed.mjs').then((m) => show('computed')(m.v));
</script></body></html>"""
WORKER = """importScripts('{other}/lib.js');
fetch('{other}/data.json').then((r) => r.json()).then((d) => postMessage(self.lib + d.from));"""
SHOWN = {
    "worker": "lib+json",
    "dynamic": "dynamic module",
    "computed": "computed module",
    "mapped": "mapped module",
}


@pytest.fixture
def servers() -> Iterator[tuple[LocalServer, LocalServer]]:
    main, other = LocalServer().start(), LocalServer(host="127.0.0.2").start()
    base = other.url("").rstrip("/")
    js, anyone = "application/javascript", [("Access-Control-Allow-Origin", "*")]
    main.routes["/"] = lambda _r: Response(200, PAGE.format(other=base).encode(), [], "text/html")
    main.routes["/worker.js"] = lambda _r: Response(200, WORKER.format(other=base).encode(), [], js)
    files = {
        "/lib.js": (b"self.lib = 'lib+';", js),
        "/data.json": (b'{"from": "json"}', "application/json"),
        "/dynamic.mjs": (b"export const v = 'dynamic module';", js),
        "/computed.mjs": (b"export const v = 'computed module';", js),
        "/mapped.mjs": (b"export const v = 'mapped module';", js),
    }
    for path, (body, ctype) in files.items():
        other.routes[path] = lambda _r, b=body, c=ctype: Response(200, b, anyone, c)
    try:
        yield main, other
    finally:
        main.stop()
        other.stop()


def test_a_captured_page_with_cross_host_workers_and_modules_replays_offline(
    qtbot: QtBot, tmp_path: Path, servers: tuple[LocalServer, LocalServer]
) -> None:
    main, other = servers
    lib = Library.open(tmp_path / "lib")

    async def capture() -> None:
        async with Capturer(lib, concurrency=1, screenshots=False) as cap:
            await cap.capture(main.url("/"), rules=PageRules(page_timeout=40, settle_seconds=1.0))

    asyncio.run(capture())
    live = len(main.requests), len(other.requests)
    assert {r.path for r in other.requests} >= {"/lib.js", "/data.json", "/mapped.mjs"}
    widget = ReplayWidget(lib)
    qtbot.addWidget(widget)
    try:
        widget.open(main.url("/"))
        shown = "JSON.stringify(Object.fromEntries([...document.querySelectorAll('p')]" \
            ".map((p) => [p.id, p.textContent])))"  # fmt: skip

        def settled() -> bool:
            text = run_js(qtbot, widget, shown)
            return isinstance(text, str) and len(json.loads(text)) == 4 and '"-"' not in text

        with contextlib.suppress(TimeoutError):  # the assertion says which is missing
            qtbot.waitUntil(settled, timeout=20_000)
        assert json.loads(str(run_js(qtbot, widget, shown))) == SHOWN
    finally:
        dispose(qtbot, widget)
    assert (len(main.requests), len(other.requests)) == live  # nothing reached the servers
