"""A local page changes between two real captures; the comparison says exactly what changed.

Between the captures the page's text is edited, its image replaced, a section removed and
its script changed; a third capture changes nothing. The text diff, the boxed regions, the
resource diff and the `archiver diff` command are checked against those edits.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator

import pytest

from archiver_app import cli
from archiver_app.capture.engine import Capturer, CaptureResult, PageRules
from archiver_app.compare import compare_captures, compile_ignore_patterns
from archiver_app.errors import InputError
from archiver_app.library import Library
from tests.helpers.webserver import LocalServer

pytestmark = pytest.mark.slow

RULES = PageRules(page_timeout=40, settle_seconds=0.2)

PAGE = """<!doctype html><html><head><title>Harbour notices</title>
<script src="/app.js"></script>
<style>body {{ font: 16px sans-serif; margin: 0 }} .box {{ height: 240px; }}</style></head>
<body>
<h1>Harbour notices</h1>
<p>Visitors today: {visitors}</p>
<p>The ferry leaves at {ferry}.</p>
<img src="/{image}" width="200" height="200">
{section}
<div class="box"></div>
<p>Opening hours are posted at the quay.</p>
</body></html>"""

SECTION = "<section><h2>Storm warning</h2><p>The pier is closed until further notice.</p></section>"


def _png(colour: tuple[int, int, int]) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (200, 200), colour).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def site(local_server: LocalServer) -> LocalServer:
    local_server.add_static("/blue.png", _png((20, 40, 200)), "image/png")
    local_server.add_static("/red.png", _png((200, 30, 30)), "image/png")
    return local_server


def _publish(
    server: LocalServer, *, visitors: int, ferry: str, image: str, storm: bool, js: str
) -> None:
    page = PAGE.format(
        visitors=visitors, ferry=ferry, image=image, section=SECTION if storm else ""
    )
    server.add_static("/", page)
    server.add_static("/app.js", js, "text/javascript")


Capture = Callable[[str], CaptureResult]


@pytest.fixture
def capture(library: Library) -> Iterator[Capture]:
    """The test's captures, one after another in one browser (as a capture job's pages
    are): a browser started for each capture cost each test seconds."""
    loop = asyncio.new_event_loop()
    cap = Capturer(library, concurrency=1)
    loop.run_until_complete(cap.__aenter__())
    try:
        yield lambda url: loop.run_until_complete(cap.capture(url, rules=RULES))
    finally:
        try:
            loop.run_until_complete(cap.__aexit__(None, None, None))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


def _capture(capture: Capture, url: str) -> int:
    result = capture(url)
    assert result.ok, result.error
    assert result.snapshot_id is not None
    return result.snapshot_id


def test_what_changed_between_two_captures(
    library: Library, site: LocalServer, capture: Capture, capsys: pytest.CaptureFixture[str]
) -> None:
    url = site.url("/")
    _publish(site, visitors=12, ferry="9:00", image="blue.png", storm=True, js="var v = 1;")
    first = _capture(capture, url)
    _publish(site, visitors=97, ferry="10:30", image="red.png", storm=False, js="var v = 2;")
    second = _capture(capture, url)

    result = compare_captures(library, second, first)  # given newest first: ordered anyway
    assert (result.old.id, result.new.id) == (first, second)
    assert result.summary.changed

    # Text: the edited line and the removed section, nothing else.
    assert result.text is not None
    changes = result.text.changes()
    removed = [line for h in changes for line in h.old]
    added = [line for h in changes for line in h.new]
    assert "The ferry leaves at 9:00." in removed and "The ferry leaves at 10:30." in added
    assert "Storm warning" in removed and "The pier is closed until further notice." in removed
    assert "Visitors today: 12" in removed
    assert "Harbour notices" not in removed + added
    assert "Opening hours are posted at the quay." not in removed + added

    # Ignoring the counter leaves the counter out of the diff.
    quiet = compare_captures(
        library, first, second, ignore=compile_ignore_patterns([r"Visitors today: \d+"])
    )
    assert quiet.text is not None
    assert not any("Visitors" in line for h in quiet.text.changes() for line in h.old + h.new)
    assert quiet.text.changed_lines < result.text.changed_lines

    # Look: the image is boxed where it is drawn (below the heading and two lines).
    assert result.visual is not None and result.visual.changed
    assert 0 < result.visual.share_changed < 0.5
    image_boxes = [b for b in result.visual.boxes if b.width >= 150 and b.height >= 150]
    assert image_boxes, result.visual.boxes
    assert all(b.x < 40 for b in image_boxes)  # the image starts at the left margin

    # Resources: the image was replaced, the script's payload changed, the page changed.
    assert f"{site.url('/red.png')}" in result.resources.added
    assert f"{site.url('/blue.png')}" in result.resources.removed
    assert f"{site.url('/app.js')}" in result.resources.changed
    assert url in result.resources.changed

    # The command prints the same, and --json carries the figures.
    lib_args = ["--library", str(library.root)]
    assert cli.main([*lib_args, "diff", str(first), str(second), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["changed"] is True
    assert data["summary"]["resources_added"] == 1 and data["summary"]["resources_removed"] == 1
    assert data["visual"]["regions"]
    assert cli.main([*lib_args, "diff", str(second), str(first)]) == 0  # either order
    out = capsys.readouterr().out
    assert "- The ferry leaves at 9:00." in out and "+ The ferry leaves at 10:30." in out
    assert out.startswith("A: ") and f"(capture {first})  (the older)" in out.splitlines()[0]
    # Captured within one minute, the times carry their seconds, or A and B would read the
    # same; the two captures may straddle a minute's turn, and then minutes are enough.
    same_minute = (
        f"{result.old.captured_at:%Y-%m-%d %H:%M}" == f"{result.new.captured_at:%Y-%m-%d %H:%M}"
    )
    with_seconds = re.compile(r" \d\d:\d\d:\d\d UTC \(capture")
    for line in out.splitlines()[:2]:
        assert bool(with_seconds.search(line)) == same_minute, line
    assert cli.main([*lib_args, "diff", str(first), str(first)]) == 2
    assert "are the same capture" in capsys.readouterr().err

    # A capture of the unchanged page: no text or look change (its payloads were revisits).
    third = _capture(capture, url)
    same = compare_captures(library, second, third)
    assert same.text is not None and not same.text.changed
    assert same.visual is not None and same.visual.changed_pixels == 0
    assert not same.resources.any
    assert not same.summary.changed


def test_refusals(
    library: Library, site: LocalServer, local_server: LocalServer, capture: Capture
) -> None:
    _publish(site, visitors=1, ferry="9:00", image="blue.png", storm=False, js="")
    local_server.add_static("/other", "<title>Other</title><p>other page</p>")
    a = _capture(capture, site.url("/"))
    b = _capture(capture, local_server.url("/other"))
    with pytest.raises(InputError, match="different addresses"):
        compare_captures(library, a, b)
    assert compare_captures(library, a, b, any_url=True).summary.changed
    with pytest.raises(InputError, match="no capture"):
        compare_captures(library, a, 999_999)
    import socket

    with socket.socket() as sock:  # a port where nothing listens: the capture fails
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    failed = capture(f"http://127.0.0.1:{closed}/")
    assert not failed.ok and failed.snapshot_id is not None
    with pytest.raises(InputError, match="not complete"):
        compare_captures(library, a, failed.snapshot_id, any_url=True)
    with pytest.raises(InputError, match="position 1"):
        compile_ignore_patterns(["a(b"])


IMG_PAGE = "<!doctype html><title>Picture</title><h1>Picture</h1>{style}<img src='/pic.png'>"


def test_ignored_text_that_is_not_on_the_page_explains_nothing(
    library: Library, site: LocalServer, capture: Capture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ignore patterns (a watch's, made for another of its pages) that match nothing on a
    page leave its look counting; an image swapped under the same address counts whatever
    the patterns leave out."""
    url = site.url("/img.html")
    site.add_static("/img.html", IMG_PAGE.format(style=""))
    site.add_static("/pic.png", _png((200, 30, 30)), "image/png")
    red = _capture(capture, url)
    site.add_static("/pic.png", _png((20, 40, 200)), "image/png")
    blue = _capture(capture, url)
    elsewhere = compile_ignore_patterns([r"^Generated at .*$", r"^Token: [0-9a-f]+$"])
    swapped = compare_captures(library, red, blue, ignore=elsewhere)
    assert site.url("/pic.png") in swapped.resources.changed
    assert swapped.summary.changed and swapped.summary.pixel_share
    ignores_the_heading = compile_ignore_patterns([r"^Picture$"])
    assert compare_captures(library, red, blue, ignore=ignores_the_heading).summary.changed
    root = ["--library", str(library.root)]
    assert cli.main([*root, "diff", str(red), str(blue), "--ignore", "^Generated at .*$"]) == 0
    assert "no change" not in capsys.readouterr().out

    # The page's own style changed its look, not its text: patterns that left nothing out
    # do not explain it away.
    site.add_static("/img.html", IMG_PAGE.format(style="<style>h1 { color: red }</style>"))
    styled = _capture(capture, url)
    restyled = compare_captures(library, blue, styled, ignore=elsewhere)
    assert restyled.summary.pixel_share and restyled.summary.changed


def test_a_hidden_token_in_the_page_s_html_is_measured_not_a_change(
    library: Library, site: LocalServer, capture: Capture
) -> None:
    """A page whose HTML differs only in a CSRF meta tag, a hidden input and a script
    nonce (same text, same look) is not changed; its own payload is still measured."""
    page = (
        "<!doctype html><html><head><title>Form</title><meta name='csrf-token' "
        "content='{t}'><script nonce='{t}'>var ready = 1;</script></head><body><h1>Sign "
        "up</h1><form><input type='hidden' name='token' value='{t}'><input name='email'>"
        "</form></body></html>"
    )
    url = site.url("/form")
    site.add_static("/form", page.format(t="9f2c1a"))
    first = _capture(capture, url)
    site.add_static("/form", page.format(t="4be07d"))
    second = _capture(capture, url)
    result = compare_captures(library, first, second)
    assert result.summary.text_share == 0 and result.summary.pixel_share == 0
    assert result.summary.resources_changed == 1 and not result.summary.changed
    assert result.resources.changed == (url,) and result.resources.page == (url,)
    assert any("only the page's own HTML differs" in note for note in result.notes)
