"""A real X display for headed Chromium (Xvfb on a display it picks itself), and the site
the browsing tests visit: a page that loads more on click, one that lazy-loads on scroll,
and a hash-routed app. Every request the server answers is logged."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from tests.helpers.webserver import LocalServer, Response

ICON = '<link rel="icon" href="data:,">'  # no favicon request: the browser's own, not a page's

MORE = f"""<!doctype html><html lang="en"><head><title>Load more</title>{ICON}
<link rel="stylesheet" href="/style.css"></head><body>
<h1>A page that loads more on click</h1>
<button id="load" onclick="fetch('/api/more').then(r => r.json()).then(d => {{
  const p = document.createElement('p'); p.id = 'more'; p.textContent = d.text;
  document.body.append(p); }})">Load more</button>
<p><a id="next" href="/scroll">Next: the scrolling page</a></p>
</body></html>"""

SCROLL = f"""<!doctype html><html lang="en"><head><title>Lazy on scroll</title>{ICON}</head>
<body><p><a id="app" href="/app#/one">On to the app</a></p>
<div style="height: 4000px">Scroll down for more.</div>
<script>
let asked = false;
window.addEventListener('scroll', () => {{
  if (asked || window.scrollY + innerHeight < document.body.scrollHeight - 300) return;
  asked = true;
  fetch('/api/lazy').then(r => r.text()).then(t => {{
    const d = document.createElement('div'); d.id = 'lazy'; d.textContent = t;
    const img = new Image(); img.src = '/img/lazy.png'; d.append(img);
    document.body.append(d);
  }});
}});
</script></body></html>"""

APP = f"""<!doctype html><html lang="en"><head><title>Hash app</title>{ICON}</head><body>
<nav><a id="two" href="#/two">View two</a></nav><main id="view"></main>
<script>
const view = document.getElementById('view');
function render() {{
  if (location.hash === '#/two') {{
    fetch('/api/two').then(r => r.text()).then(t => {{ view.textContent = t; }});
  }} else {{
    view.textContent = 'VIEW-ONE-TEXT';
  }}
}}
window.addEventListener('hashchange', render);
render();
</script></body></html>"""

OPENER = f"""<!doctype html><html><head><title>Opener</title>{ICON}</head><body>
<a id="pop" href="/scroll" target="_blank">Open the scrolling page in a new tab</a>
</body></html>"""

# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc00000030101005a4d6b7a0000000049454e44ae426082"
)


@pytest.fixture
def browse_site() -> Iterator[LocalServer]:
    server = LocalServer(
        {
            "/more": lambda r: Response(body=MORE.encode()),
            "/opener": lambda r: Response(body=OPENER.encode()),
            "/style.css": lambda r: Response(body=b"h1 { color: teal }", content_type="text/css"),
            "/api/more": lambda r: Response(
                body=b'{"text": "MORE-CONTENT-42"}', content_type="application/json"
            ),
            "/scroll": lambda r: Response(body=SCROLL.encode()),
            "/api/lazy": lambda r: Response(body=b"LAZY-CONTENT-7", content_type="text/plain"),
            "/img/lazy.png": lambda r: Response(body=PNG, content_type="image/png"),
            "/app": lambda r: Response(body=APP.encode()),
            "/api/two": lambda r: Response(body=b"VIEW-TWO-TEXT", content_type="text/plain"),
        }
    ).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    """A fresh Xvfb (it picks a free display number itself), DISPLAY set to it meanwhile."""
    binary = shutil.which("Xvfb")
    if binary is None:
        pytest.skip("Xvfb is not installed (packaging/linux/install-system-deps.sh test)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [binary, "-displayfd", str(write_fd), "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as reader:
        number = reader.readline().strip()
    if not number:
        proc.kill()
        proc.wait()
        pytest.fail("Xvfb did not start")
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    try:
        yield f":{number}"
    finally:
        if old is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = old
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def xvfb_display() -> Iterator[str]:
    """DISPLAY of a fresh Xvfb, for the test (:func:`xvfb`)."""
    with xvfb() as display:
        yield display
