"""Modules of a replayed page come from the archive, however the page names them."""

from __future__ import annotations

import contextlib
import json

import pytest
from pytestqt.exceptions import TimeoutError
from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js

# Each way of reaching a module posts what it read, or why it failed, into window.got.
PAGE = """<!doctype html><html><head><title>Modules</title>
<script type="importmap">{"imports": {"lib": "https://cdn.example/lib.mjs",
  "cdn/": "https://cdn.example/"}}</script>
<script>window.got = {mapped: 'pending', 'mapped dynamic': 'pending',
  'computed dynamic': 'pending', 'template dynamic': 'pending', 'module worker': 'pending',
  'classic worker': 'pending', 'audio worklet': 'pending', 'module blob worker': 'pending'};
</script>
<script type="module">import { value } from 'lib'; window.got.mapped = value;</script>
<script>
const note = (name) => [(v) => { window.got[name] = v; },
                        (e) => { window.got[name] = 'failed: ' + e; }];
import('cdn/dyn.mjs').then((m) => m.value).then(...note('mapped dynamic'));
const cdn = 'https://cdn.example';
import(cdn + '/dyn.mjs').then((m) => m.value).then(...note('computed dynamic'));
import(`${cdn}/dyn.mjs`).then((m) => m.value).then(...note('template dynamic'));
new OfflineAudioContext(1, 128, 8000).audioWorklet.addModule('https://cdn.example/wk.js')
  .then(() => 'added').then(...note('audio worklet'));
new Worker('/mw.js', {type: 'module'}).onmessage =
  (e) => { window.got['module worker'] = e.data; };
new Worker('/cw.js').onmessage = (e) => { window.got['classic worker'] = e.data; };
// The blob's addresses are made as the page runs: the page as served does not hold them.
const blob = new Blob([%(blob)s.replaceAll('@cdn@', 'https://cdn.example')],
  {type: 'text/javascript'});
new Worker(URL.createObjectURL(blob), {type: 'module'}).onmessage = (e) => {
  window.got['module blob worker'] = e.data; };
</script></head><body></body></html>"""
MODULE_WORKER = """import { value } from 'https://cdn.example/lib.mjs';
const dyn = await import('https://cdn.example/dyn.mjs');
const computed = await import(['https:', '', 'cdn.example', 'dyn.mjs'].join('/'));
const r = await fetch('https://api.example/pub.json');
postMessage([value, dyn.value, computed.value, await r.text()].join(' '));"""
BLOB_WORKER = """import { value } from '@cdn@/lib.mjs';
import('@cdn@/dyn.mjs').then((m) => postMessage(value + ' ' + m.value));"""
CLASSIC_WORKER = """importScripts('https://cdn.example/lib.js');
fetch('https://api.example/pub.json').then((r) => r.text()).then(
  (t) => postMessage(self.lib + ' ' + t), (e) => postMessage('failed: ' + e));"""


@pytest.fixture
def widget(replay_tab: ReplayWidget) -> ReplayWidget:
    return replay_tab


def test_import_maps_and_workers_reach_modules_and_data_of_other_archived_hosts(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """A module named through an import map (statically and by ``import()``) or by an
    address a script computes, a module worker's imports and fetch, a classic worker's
    ``importScripts()`` and fetch, a worklet's module and a module worker's made from a
    blob, of another host's full ``https://`` address are all served from the archive."""
    anyone = [("Access-Control-Allow-Origin", "*")]
    js = "text/javascript"
    w = ArchiveWriter(library)
    page = PAGE % {"blob": json.dumps(BLOB_WORKER)}
    w.response("https://a.example/", page, at=at(2024))
    w.response("https://a.example/mw.js", MODULE_WORKER, at=at(2024), mime=js)
    w.response("https://a.example/cw.js", CLASSIC_WORKER, at=at(2024), mime=js)
    w.response("https://cdn.example/lib.mjs", "export const value = 'lib';", at=at(2024),
               mime=js, headers=anyone)  # fmt: skip
    w.response("https://cdn.example/dyn.mjs", "export const value = 'dyn';", at=at(2024),
               mime=js, headers=anyone)  # fmt: skip
    w.response("https://cdn.example/wk.js", "registerProcessor('p', class extends "
               "AudioWorkletProcessor { process() { return false; } });", at=at(2024), mime=js,
               headers=anyone)  # fmt: skip
    w.response("https://cdn.example/lib.js", "self.lib = 'classic';", at=at(2024), mime=js)
    w.response("https://api.example/pub.json", '{"pub": 1}', at=at(2024),
               mime="application/json", headers=anyone)  # fmt: skip
    w.commit()
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open("https://a.example/", None)
    got = "JSON.stringify(window.got || {pending: 'pending'})"
    with contextlib.suppress(TimeoutError):  # the assertion says which is still pending
        qtbot.waitUntil(lambda: "pending" not in str(run_js(qtbot, widget, got)), timeout=15_000)
    assert json.loads(str(run_js(qtbot, widget, got))) == {
        "mapped": "lib",
        "mapped dynamic": "dyn",
        "computed dynamic": "dyn",
        "template dynamic": "dyn",
        "module worker": 'lib dyn dyn {"pub": 1}',
        "classic worker": 'classic {"pub": 1}',
        "audio worklet": "added",
        "module blob worker": "lib dyn",
    }
