"""document.cookie in pages framed by ``archiver serve``, in Chromium: the browser keeps
no cookies for a cross-site frame, so the server keeps them, per archived site."""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from archiver_app.capture.browser import launch_options, require_browser
from archiver_app.library import Library
from archiver_app.replay.server import COOKIE_PATH, ReplayServer
from tests.helpers.archive import ArchiveWriter, at

# Sets a cookie and reloads if it is missing: the frame's name counts the loads (at most
# 5 reloads, so a broken jar ends).
GATE = """<!doctype html><html><head><title>gate</title></head><body><p id=st></p><script>
var n = +(window.name || 0) + 1;
window.name = String(n);
if (!document.cookie.includes('seen=1')) {
  document.cookie = 'seen=1; path=/';
  if (n < 6) { location.reload(); } else { document.getElementById('st').textContent = 'gave up'; }
} else {
  document.getElementById('st').textContent = 'cookie=' + document.cookie + ' loads=' + n;
}
</script></body></html>"""
READS = """<!doctype html><html><body><p id=st></p><script>
document.getElementById('st').textContent = 'cookie=' + document.cookie;
</script></body></html>"""


def test_a_cookie_set_by_script_survives_the_reload_and_stays_with_its_site(
    library: Library,
) -> None:
    w = ArchiveWriter(library)
    w.response("https://a.example/", GATE, at=at(2024), page=True)
    cookies = [("Set-Cookie", "sid=b1; Path=/"), ("Set-Cookie", "h=1; HttpOnly")]
    w.response("https://b.example/", READS, at=at(2024), page=True, headers=cookies)
    w.commit()
    server = ReplayServer(library).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**launch_options(require_browser()))  # type: ignore[arg-type]
            page = browser.new_page()
            page.goto(server.url_for("https://a.example/"), wait_until="load")
            frame = page.main_frame.child_frames[0]
            frame.wait_for_function("document.getElementById('st').textContent !== ''")
            assert frame.locator("#st").inner_text() == "cookie=seen=1 loads=2"
            page.goto(server.page_url("https://b.example/"), wait_until="load")
            frame = page.main_frame.child_frames[0]
            frame.wait_for_function("document.getElementById('st').textContent !== ''")
            assert frame.locator("#st").inner_text() == "cookie=sid=b1"
            # b.example writing into a.example's jar, on a.example's host: refused.
            a_page = server.content_url("https://a.example/", "20240101000000")
            a_host = a_page.split("/2024", 1)[0]
            forged = frame.evaluate(
                """([host, url]) => { const x = new XMLHttpRequest();
                try { x.open('GET', host + PATH + '?set=x%3D1&url=' + encodeURIComponent(url),
                             false); x.send(); return x.status; } catch (e) { return 'refused'; }
                }""".replace("PATH", repr(COOKIE_PATH)),
                [a_host, a_page],
            )
            assert forged in ("refused", 403)
            page.goto(server.page_url("https://a.example/"), wait_until="load")
            frame = page.main_frame.child_frames[0]
            frame.wait_for_function("document.getElementById('st').textContent !== ''")
            assert frame.evaluate("document.cookie") == "seen=1"
            browser.close()
    finally:
        server.close()
