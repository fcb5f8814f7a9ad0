"""Workers of a replayed page read other archived hosts, however the page makes them."""

from __future__ import annotations

import json

import pytest
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js

READ = """fetch('https://api.example/pub.json').then(r => r.text()).then(
  t => postMessage(MARK + t), e => postMessage('failed: ' + e));"""
STRICT = "(function () { return this === undefined ? 'strict:' : 'sloppy:'; })()"
# Each worker posts what it read, or why it failed, into window.got[its name].
PAGE = """<!doctype html><html><head><title>Workers</title></head><body><script>
window.got = {};
function worker(name, url, options) {
  window.got[name] = 'pending';
  try {
    new Worker(url, options).onmessage = (e) => { window.got[name] = e.data; };
  } catch (e) { window.got[name] = 'refused: ' + e; }
}
const blob = (text) => URL.createObjectURL(new Blob([text], {type: 'text/javascript'}));
worker('absolute', 'https://a.example/w.js');
worker('nested', '/outer.js');
worker('blob', blob(%(blob)s));
worker('strict blob', blob('"use strict";\\n' + %(strict)s));
worker('module blob', blob(%(blob)s), {type: 'module'});
</script></body></html>"""


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def test_workers_made_from_blobs_workers_and_full_addresses_read_other_hosts(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """A worker made from a blob (its script never reaches the view), one a worker makes,
    and one named by this site's full ``https://`` address (refused as another origin
    once the page lives on the archive scheme) fetch another archived host's JSON."""
    read = READ.replace("MARK", "'read:'")
    page = PAGE % {
        "blob": json.dumps(read),
        "strict": json.dumps(READ.replace("MARK", STRICT)),
    }
    js = "text/javascript"
    w = ArchiveWriter(library)
    w.response("https://a.example/", page, at=at(2024))
    w.response("https://a.example/w.js", read, at=at(2024), mime=js)
    w.response("https://a.example/outer.js",
               "new Worker('/inner.js').onmessage = (e) => postMessage(e.data);",
               at=at(2024), mime=js)  # fmt: skip
    w.response("https://a.example/inner.js", read, at=at(2024), mime=js)
    w.response("https://api.example/pub.json", '{"pub": 1}', at=at(2024),
               mime="application/json", headers=[("Access-Control-Allow-Origin", "*")])  # fmt: skip
    w.commit()
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open("https://a.example/", None)
    got = "JSON.stringify(window.got || {pending: 'pending'})"
    qtbot.waitUntil(lambda: "pending" not in str(run_js(qtbot, widget, got)), timeout=15_000)
    assert json.loads(str(run_js(qtbot, widget, got))) == {
        "absolute": 'read:{"pub": 1}',
        "nested": 'read:{"pub": 1}',
        "blob": 'read:{"pub": 1}',
        "strict blob": 'strict:{"pub": 1}',
        "module blob": 'read:{"pub": 1}',
    }
