"""document.cookie in the replay tab: kept per archived site for the tab's session."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from archiver_app.gui.replay.network import SERVED
from archiver_app.gui.replay.widget import ReplayWidget
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at
from tests.helpers.gui_fixtures import run_js

# Sets a cookie and reloads if it is missing (at most 5 times, so a broken jar ends).
GATE = """<!doctype html><html><head><title>gate</title></head><body><script>
var n = +(sessionStorage.getItem('n') || 0);
if (!document.cookie.includes('seen=1')) {
  document.cookie = 'seen=1; path=/';
  sessionStorage.setItem('n', n + 1);
  if (n < 5) { location.reload(); } else { document.title = 'gave up'; }
} else {
  document.title = 'cookie=' + document.cookie + ' loads=' + (n + 1);
}
</script></body></html>"""
# Reads its cookies, and tries to read a.example's through the view's own address.
OTHER = """<!doctype html><html><head><title>other</title></head><body><script>
var forged = 'refused';
try {
  var x = new XMLHttpRequest();
  x.open('GET', 'archive-https://archiver.invalid/cookie?url='
         + encodeURIComponent('archive-https://a.example/'), false);
  x.send();
  forged = 'read:' + x.responseText;
} catch (e) {}
document.title = 'cookie=' + document.cookie + ' forged=' + forged;
</script></body></html>"""
READS = "<!doctype html><html><head><title>x</title></head><body><script>" \
    "document.title = 'cookie=' + document.cookie;</script></body></html>"  # fmt: skip


def _open(qtbot: QtBot, widget: ReplayWidget, url: str) -> str:
    with qtbot.waitSignal(widget.page.loadFinished, timeout=20_000):
        widget.open(url, None)
    qtbot.waitUntil(lambda: widget.page.title().startswith(("cookie=", "gave up")), timeout=20_000)
    return widget.page.title()


def test_a_cookie_set_by_script_survives_the_reload_and_stays_with_its_site(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    w = ArchiveWriter(library)
    w.response("https://a.example/", GATE, at=at(2024))
    w.response("https://b.example/", OTHER, at=at(2024))
    w.commit()
    assert _open(qtbot, replay_tab, "https://a.example/") == "cookie=seen=1 loads=2"
    served = [e for e in replay_tab.log.entries() if e.outcome == SERVED]
    assert [e.url for e in served] == ["https://a.example/"] * 2
    # Another archived site sees none of it, even when it names a.example's address.
    assert _open(qtbot, replay_tab, "https://b.example/") == "cookie= forged=refused"
    assert run_js(qtbot, replay_tab, "document.cookie = 'b=2'; document.cookie") == "b=2"
    assert _open(qtbot, replay_tab, "https://a.example/") == "cookie=seen=1 loads=2"


def test_archived_set_cookie_headers_are_read_by_the_pages_script(
    qtbot: QtBot, library: Library, replay_tab: ReplayWidget
) -> None:
    """What the archived answer set, except HttpOnly cookies, which no script reads."""
    w = ArchiveWriter(library)
    w.response("https://a.example/", READS, at=at(2024), headers=[
        ("Set-Cookie", "sid=abc; Path=/; Secure"),
        ("Set-Cookie", "secret=x; Path=/; HttpOnly"),
    ])  # fmt: skip
    w.commit()
    assert _open(qtbot, replay_tab, "https://a.example/") == "cookie=sid=abc"
    assert run_js(qtbot, replay_tab, "document.cookie = 'secret=y'; document.cookie") == "sid=abc"
