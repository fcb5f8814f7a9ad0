"""The replay view renders archived pages offline, with timeline and clear messages."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWebEngineCore import QWebEngineLoadingInfo
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from archiver_app.gui.replay.network import BLOCKED, NOT_ARCHIVED, SERVED
from archiver_app.gui.replay.schemes import to_archive_url
from archiver_app.gui.replay.widget import NO_SCREENSHOT, ReplayWidget
from archiver_app.library import Library
from archiver_app.store.models import Copy, CopyState, Destination, File, Snapshot
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import dispose, run_js

HOME = "https://site.example/"
PAGE = """<!doctype html><html><head><title>Home {year}</title>
<link rel="stylesheet" href="/style.css?v=3"></head>
<body><h1 id="h">Archived home {year}</h1><img id="logo" src="https://cdn.example/logo.png">
<a id="gone" href="https://elsewhere.example/">elsewhere</a>
<img src="file:///etc/passwd"></body></html>"""
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2259e"
    "4f0000000049454e44ae426082"
)


def _archive(library: Library) -> None:
    w = ArchiveWriter(library, "collections/default/2024/01/a/capture.warc.gz")
    w.response(HOME, PAGE.format(year=2022), at=at(2022), page=True)
    w.response(HOME, PAGE.format(year=2024), at=at(2024), page=True)
    w.response(
        "https://site.example/style.css?v=3", "h1{color:rgb(1,2,3)}", at=at(2024), mime="text/css"
    )
    w.response("https://cdn.example/logo.png", PNG, at=at(2024), mime="image/png")
    w.commit()


def _open(qtbot: QtBot, widget: ReplayWidget, url: str, at_: str | None = None) -> None:
    """Open ``url`` and wait for that page's own load to end: a navigation the page
    refused just before (a message page's button) ends later, with its own loadFinished."""
    target = to_archive_url(url).toString()
    done = (QWebEngineLoadingInfo.LoadStatus.LoadSucceededStatus,
            QWebEngineLoadingInfo.LoadStatus.LoadFailedStatus)  # fmt: skip

    def ended(info: QWebEngineLoadingInfo) -> bool:
        return info.url().toString() == target and info.status() in done

    with qtbot.waitSignal(widget.page.loadingChanged, timeout=20_000, check_params_cb=ended):
        widget.open(url, at_)


@pytest.fixture
def widget(qtbot: QtBot, library: Library) -> Iterator[ReplayWidget]:
    view = ReplayWidget(library)
    qtbot.addWidget(view)
    yield view
    dispose(qtbot, view)  # the page and its profile go now, not at interpreter exit


def test_pages_are_rewritten_off_the_gui_thread(
    widget: ReplayWidget, library: Library, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pointing a page's addresses at the archive reads the whole page (seconds for one of
    50 MB): it is done on the handler's pool, so the window stays responsive meanwhile."""
    import threading

    from archiver_app.gui.replay import network

    threads: list[threading.Thread] = []

    def recorded(response: Any, worker: bool) -> bytes:
        threads.append(threading.current_thread())
        return rewrite(response, worker)

    rewrite = network._archive_addresses
    monkeypatch.setattr(network, "_archive_addresses", recorded)
    _archive(library)
    _open(qtbot, widget, HOME)
    qtbot.waitUntil(lambda: len(threads) >= 2)  # the page and its style sheet
    assert threading.main_thread() not in threads
    logo = run_js(qtbot, widget, "document.getElementById('logo').getAttribute('src')")
    assert str(logo).startswith("archive-https:")


def test_replay_view_serves_page_timeline_and_messages(
    qtbot: QtBot, library: Library, widget: ReplayWidget, tmp_path
) -> None:
    _archive(library)
    widget.resize(1000, 700)
    widget.show()
    captures: list[str] = []
    widget.captureChanged.connect(captures.append)
    _open(qtbot, widget, HOME)

    # The newest capture, with its stylesheet and cross-host image, all from the archive.
    assert run_js(qtbot, widget, "document.getElementById('h').textContent") == "Archived home 2024"
    assert run_js(qtbot, widget, "getComputedStyle(document.getElementById('h')).color") == (
        "rgb(1, 2, 3)"
    )
    qtbot.waitUntil(
        lambda: run_js(qtbot, widget, "document.getElementById('logo').naturalWidth") == 1
    )
    assert widget.address.text() == HOME  # the original URL, not the archive scheme
    assert widget.address.cursorPosition() == 0  # shown from its host, not its end
    assert widget.page.title() == "Home 2024"
    assert "Archived on 2024-01-01 00:00:00 UTC — capture 2 of 2" in widget.banner.text()
    assert captures[-1].startswith("20240101")
    log = widget.log.entries()
    served = {e.url for e in log if e.outcome == SERVED}
    assert {HOME, "https://site.example/style.css?v=3", "https://cdn.example/logo.png"} <= served
    assert not any(e.url.startswith("http") and e.outcome == BLOCKED for e in log)

    # Previous capture through the timeline.
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.step(-1)
    assert run_js(qtbot, widget, "document.getElementById('h').textContent") == "Archived home 2022"
    assert "capture 1 of 2" in widget.banner.text()
    assert not widget.older_button.isEnabled() and widget.newer_button.isEnabled()

    # Find in page.
    with qtbot.waitSignal(widget.page.findTextFinished, timeout=10_000) as found:
        widget.find_text("Archived home")
    assert found.args[0].numberOfMatches() == 1
    assert widget.find_count.text() == "1 of 1"
    with qtbot.waitSignal(widget.page.findTextFinished, timeout=10_000):
        widget.find_text("no such words here")
    assert widget.find_count.text() == "No matches"

    # A link to a site not in the archive: an in-page message, nothing fetched.
    requested: list[tuple[str, int]] = []
    widget.captureRequested.connect(lambda url, linked: requested.append((url, linked)))
    assert widget.current is not None and widget.current.snapshot_id is not None
    linked_from = widget.current.snapshot_id  # the page shown before: its profile is kept
    _open(qtbot, widget, "https://elsewhere.example/")
    assert run_js(qtbot, widget, "document.getElementById('archiver-message').dataset.kind") == (
        "not-archived"
    )
    assert widget.address.text() == "https://elsewhere.example/"
    assert any(e.outcome == NOT_ARCHIVED for e in widget.log.entries())
    assert "Not archived" in widget.banner.text()
    run_js(qtbot, widget, "document.getElementById('capture-now').click()")
    qtbot.waitUntil(lambda: requested == [("https://elsewhere.example/", linked_from)])

    # Screenshot: this capture has none.
    _open(qtbot, widget, HOME)
    widget.screenshot_button.setChecked(True)
    assert widget.screenshot_label.text() == NO_SCREENSHOT
    widget.screenshot_button.setChecked(False)

    # The WARC moved to a drive: the view says which one.
    warc = library.root / "collections/default/2024/01/a/capture.warc.gz"
    shutil.move(warc, tmp_path / "elsewhere.warc.gz")
    with library.write() as s:
        dest = Destination(uuid=str(uuid.uuid4()), label="Archive Disk 2")
        s.add(dest)
        s.flush()
        s.add(
            Copy(file_id=s.scalar(select(File.id)), destination_id=dest.id, state=CopyState.PRESENT)
        )
    widget.replayer.invalidate()  # bodies stay cached while their record is unchanged
    _open(qtbot, widget, HOME)
    # (under load the body may still be empty just after loadFinished: asked again)
    qtbot.waitUntil(
        lambda: "Archive Disk 2" in str(run_js(qtbot, widget, "document.body.innerText")),
        timeout=15_000,
    )
    assert "not on this computer" in widget.banner.text()


def test_redirect_loop_and_damaged_record_show_messages(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    w = ArchiveWriter(library, "imports/bad.warc.gz")
    w.response(
        "https://loop.example/", "", at=at(2024), status=302, headers=[("Location", "/again")]
    )
    w.response(
        "https://loop.example/again",
        "",
        at=at(2024),
        status=301,
        headers=[("Location", "https://loop.example/")],
    )
    w.response("https://ok.example/", "<p>fine</p>", at=at(2024))
    last = w.response("https://cut.example/", "<p>" + "z" * 30000 + "</p>", at=at(2024))
    w.commit()
    with (library.root / "imports/bad.warc.gz").open("r+b") as fh:
        fh.truncate(last.offset + 40)

    _open(qtbot, widget, "https://loop.example/")
    assert run_js(qtbot, widget, "document.getElementById('archiver-message').dataset.kind") == (
        "redirect-loop"
    )
    assert "https://loop.example/again" in str(run_js(qtbot, widget, "document.body.innerText"))
    assert "loop" in widget.banner.text()

    _open(qtbot, widget, "https://cut.example/")
    assert run_js(qtbot, widget, "document.getElementById('archiver-message').dataset.kind") == (
        "damaged"
    )
    assert "truncated" in str(run_js(qtbot, widget, "document.body.innerText"))

    _open(qtbot, widget, "https://ok.example/")  # and the view still works
    assert run_js(qtbot, widget, "document.body.innerText") == "fine"


def test_open_in_my_browser_serves_the_capture_shown_offline(
    qtbot: QtBot, widget: ReplayWidget, library: Library
) -> None:
    """The way out when the embedded engine cannot run a page: the capture shown, at its
    time, from a replay server on 127.0.0.1; and the banner offers it when the page's
    renderer stops."""
    import re
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())

    def served(url: str) -> bytes:
        # The entry address sets the server's cookie and lands on the page's shell; the
        # archived page itself comes from the content host the shell frames (asked for by
        # its name: this resolver may not know *.localhost as browsers do).
        with opener.open(url, timeout=10) as resp:
            frame = re.search(r'<iframe src="http://([^/"]+)(/[^"]+)"', resp.read().decode())
        assert frame is not None and widget._server is not None
        host, path = frame.groups()
        content = f"http://127.0.0.1:{widget._server.content_port}{path}"
        request = urllib.request.Request(content, headers={"Host": host})
        with opener.open(request, timeout=10) as resp:
            return bytes(resp.read())

    _archive(library)
    assert widget.own_browser_url() is None  # nothing shown yet
    _open(qtbot, widget, HOME, "2022")
    url = widget.own_browser_url()
    assert url is not None and url.startswith("http://127.0.0.1:") and "/20220101000000/" in url
    assert b"Archived home 2022" in served(url)
    _open(qtbot, widget, HOME)
    newest = widget.own_browser_url()
    assert newest is not None and "/20240101000000/" in newest
    assert b"Archived home 2024" in served(newest)

    with qtbot.waitSignal(widget.page.renderProcessTerminated, timeout=20_000):
        widget.view.load(QUrl("chrome://crash"))  # a renderer that really stops
    assert "Open in my browser" in widget.banner.text()


SITE_PAGE = """<!doctype html><html><head>
<link rel="stylesheet" href="https://fonts.example/css?family=Solid">
<script type="module" src="https://cdn.example/mod.js"></script></head>
<body><p style="font-family: Solid">page</p></body></html>"""


def test_archived_sites_read_each_other_only_with_an_archived_cors_grant(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """Chromium leaves CORS to the scheme handler: a script gets another archived site's
    file only where the archived ``Access-Control-Allow-Origin`` let its site read it,
    whether it writes the address as ``//host`` or in full (``https://host``: a CORS
    request the interceptor's redirect would lose). Fonts and module scripts from another
    host, asked for in CORS mode too, load from the archive."""
    import pywb

    font = Path(pywb.__file__).parent / "static/fonts/font-awesome/fa-solid-900.ttf"
    w = ArchiveWriter(library)
    for site in ("https://a.example/", "https://other.example/"):
        w.response(site, SITE_PAGE, at=at(2024))
    w.response(
        "https://api.example/data.json",
        '{"ok": true}',
        at=at(2024),
        mime="application/json",
        headers=[("Access-Control-Allow-Origin", "https://a.example")],
    )
    anyone = [("Access-Control-Allow-Origin", "*")]
    w.response(
        "https://fonts.example/css?family=Solid",
        "@font-face { font-family: Solid; src: url(https://fonts.example/s.ttf); }",
        at=at(2024), mime="text/css", headers=anyone,
    )  # fmt: skip
    w.response("https://fonts.example/s.ttf", font.read_bytes(), at=at(2024),
               mime="font/ttf", headers=anyone)  # fmt: skip
    w.response("https://cdn.example/mod.js", "document.body.dataset.module = 'ran';",
               at=at(2024), mime="text/javascript", headers=anyone)  # fmt: skip
    w.commit()
    reads = {
        "fetch //": "fetch('//api.example/data.json').then(r => r.text())",
        "fetch https://": "fetch('https://api.example/data.json').then(r => r.text())",
        "fetch Request": "fetch(new Request('https://api.example/data.json')).then(r => r.text())",
        "XHR https://": "new Promise((ok, no) => { const x = new XMLHttpRequest();"
        " x.open('GET', 'https://api.example/data.json'); x.onload = () => ok(x.responseText);"
        " x.onerror = no; x.send(); })",
        "font": "document.fonts.load('16px Solid').then(faces => String(faces.length))",
    }
    for site, data in (("https://a.example/", '{"ok": true}'), ("https://other.example/", "")):
        _open(qtbot, widget, site)
        got = {}
        for name, read in reads.items():
            settle = ".then(t => window.got = 'read:' + t, e => window.got = 'failed: ' + e)"
            run_js(qtbot, widget, f"window.got = 'pending'; {read}{settle}; 0")
            qtbot.waitUntil(lambda: run_js(qtbot, widget, "window.got") != "pending")
            got[name] = run_js(qtbot, widget, "window.got")
        assert got == {
            "fetch //": f"read:{data}",
            "fetch https://": f"read:{data}",
            "fetch Request": f"read:{data}",
            "XHR https://": f"read:{data}",
            "font": "read:1",
        }, site
        qtbot.waitUntil(lambda: run_js(qtbot, widget, "document.body.dataset.module") == "ran")


def test_an_open_replay_lists_a_capture_made_while_it_is_open(
    qtbot: QtBot, library: Library, main_window: Any
) -> None:
    """A capture, watch or import that ends while the page is open in a tab (or in a
    comparison) adds to its timeline: Newer is offered, the page shown stays."""
    w = ArchiveWriter(library, "collections/default/2022/01/a/capture.warc.gz")
    w.response(HOME, PAGE.format(year=2022), at=at(2022), page=True)
    w.commit()
    with library.write() as s:  # the capture began a second before its page answered
        snap = s.scalars(select(Snapshot)).one()
        first, snap.captured_at = snap.id, snap.captured_at - timedelta(seconds=1)
    tab = main_window.open_replay_id(first)
    with qtbot.waitSignal(tab.page.loadFinished, timeout=20_000):
        pass
    # the banner gives the capture's time, as its timeline does, not the record's
    assert "Archived on 2021-12-31 23:59:59 UTC — capture 1 of 1" in tab.banner.text()
    assert tab.timeline.currentText().startswith("2021-12-31 23:59")
    assert not tab.newer_button.isEnabled()
    later = ArchiveWriter(library, "collections/default/2024/01/b/capture.warc.gz")
    later.response(HOME, PAGE.format(year=2024), at=at(2024), page=True)
    later.commit()
    main_window.jobs.job_finished.emit(7, "completed")  # the Jobs panel saw a job end
    assert "Archived on 2021-12-31 23:59:59 UTC — capture 1 of 2" in tab.banner.text()
    assert tab.newer_button.isEnabled() and tab.timeline.count() == 2
    assert run_js(qtbot, tab, "document.getElementById('h').textContent") == "Archived home 2022"


WORKER_PAGE = """<!doctype html><html><head><title>Workers</title>
<script type="module" src="/main.mjs"></script></head><body><p>workers</p>
<script>
window.worker = 'pending';
const w = new Worker('/w.js');
w.onmessage = (e) => { window.worker = e.data; };
window.dynamic = 'pending';
import('https://cdn.example/dyn.mjs').then(m => { window.dynamic = m.value; },
                                           e => { window.dynamic = 'failed: ' + e; });
</script></body></html>"""
WORKER_JS = """
fetch('https://api.example/pub.json').then(r => r.text()).then(
  t => postMessage('read:' + t), e => postMessage('failed: ' + e));
"""


def test_workers_and_module_imports_reach_other_archived_hosts(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """A worker's fetch() of a full ``https://`` address on another host, a dynamic
    ``import()`` and a module's static ``import ... from`` of one are CORS requests the
    interceptor's redirect would lose: they are served from the archive too."""
    anyone = [("Access-Control-Allow-Origin", "*")]
    js = "text/javascript"
    w = ArchiveWriter(library)
    w.response("https://a.example/", WORKER_PAGE, at=at(2024))
    w.response("https://a.example/w.js", WORKER_JS, at=at(2024), mime=js)
    w.response("https://a.example/main.mjs",
               "import { value } from 'https://cdn.example/dyn.mjs';\n"
               "document.body.dataset.main = value;", at=at(2024), mime=js)  # fmt: skip
    w.response("https://cdn.example/dyn.mjs", "export const value = 'dynamic';", at=at(2024),
               mime=js, headers=anyone)  # fmt: skip
    w.response("https://api.example/pub.json", '{"pub": 1}', at=at(2024),
               mime="application/json", headers=anyone)  # fmt: skip
    w.commit()
    _open(qtbot, widget, "https://a.example/")
    values = "JSON.stringify([window.worker, window.dynamic, document.body.dataset.main])"
    qtbot.waitUntil(lambda: "pending" not in str(run_js(qtbot, widget, values)), timeout=15_000)
    assert json.loads(str(run_js(qtbot, widget, values))) == [
        'read:{"pub": 1}',
        "dynamic",
        "dynamic",
    ]


def test_a_style_sheet_with_integrity_applies_once_its_addresses_point_at_the_archive(
    qtbot: QtBot, library: Library, widget: ReplayWidget
) -> None:
    """A style sheet named with ``integrity=`` whose text names a full address is served
    with that address pointed at the archive: the browser refused it as tampered with."""
    css = b"h1{background:url(https://img.example/b.png)} h1{color:rgb(1,2,3)}"
    digest = "sha256-" + base64.b64encode(hashlib.sha256(css).digest()).decode()
    page = (
        '<!doctype html><link rel=stylesheet href="https://cdn.example/s.css"'
        f' integrity="{digest}" crossorigin="anonymous"><h1 id=h>styled</h1>'
    )
    w = ArchiveWriter(library)
    w.response("https://a.example/", page, at=at(2024))
    w.response("https://cdn.example/s.css", css.decode(), at=at(2024), mime="text/css",
               headers=[("Access-Control-Allow-Origin", "*")])  # fmt: skip
    w.commit()
    _open(qtbot, widget, "https://a.example/")
    color = "getComputedStyle(document.getElementById('h')).color"
    qtbot.waitUntil(lambda: run_js(qtbot, widget, color) == "rgb(1, 2, 3)", timeout=10_000)
