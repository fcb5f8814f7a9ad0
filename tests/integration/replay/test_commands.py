"""``archiver replay --screenshot`` and ``archiver serve`` run as a user runs them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from PIL import Image

from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

PAGE = """<!doctype html><html><head><title>Command page</title>
<style>body {{ background: rgb(0, 128, 255); }}</style></head>
<body><p>{text}</p><img src="https://img.example/pic.png">
<img src="https://missing.example/gone.png"><img src="file:///etc/hostname"></body></html>"""
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2259e"
    "4f0000000049454e44ae426082"
)


def _library(root: Path) -> None:
    with Library.open(root) as lib:
        w = ArchiveWriter(lib)
        w.response("https://cmd.example/", PAGE.format(text="old"), at=at(2020), page=True)
        w.response("https://cmd.example/", PAGE.format(text="new"), at=at(2024), page=True)
        w.response("https://img.example/pic.png", PNG, at=at(2024), mime="image/png")
        w.commit()


def _archiver(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "archiver_app", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
        **kw,  # type: ignore[arg-type]
    )


def test_replay_screenshot_prints_every_request(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    _library(root)
    png = tmp_path / "out.png"
    done = _archiver(
        "--library",
        str(root),
        "replay",
        "https://cmd.example/",
        "--at",
        "2020",
        "--screenshot",
        str(png),
        "--width",
        "640",
        "--height",
        "480",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(re.match(r"served\thttps://cmd.example/ .*2020", ln) for ln in lines), lines
    assert "served\thttps://img.example/pic.png" in done.stdout
    assert "not archived\thttps://missing.example/gone.png" in done.stdout
    assert "blocked\tfile:///etc/hostname" in done.stdout
    assert re.search(r"wrote .*out.png \(640x480, capture 20200101000000\)", done.stdout)
    image = Image.open(png).convert("RGB")
    assert image.size == (640, 480)
    assert image.getpixel((600, 400)) == (0, 128, 255)  # the archived page's background

    missing = _archiver(
        "--library",
        str(root),
        "replay",
        "https://nowhere.example/",
        "--screenshot",
        str(tmp_path / "none.png"),
    )
    assert missing.returncode == 1
    assert "not-archived" in missing.stderr
    bad = _archiver("--library", str(root), "replay", "https://cmd.example/", "--at", "soon")
    assert bad.returncode == 2 and "--at 'soon' is not a time" in bad.stderr


GROWING = """<!doctype html><html><head><title>Growing page</title>
<style>body { margin: 0; background: rgb(0, 128, 255); }
.block { height: 400px; background: rgb(255, 128, 0); }</style></head>
<body><p>top</p><script>
let n = 0;
function grow() {
  const block = document.createElement("div");
  block.className = "block";
  document.body.appendChild(block);
  if (++n < 8) setTimeout(grow, 150);
}
addEventListener("load", () => setTimeout(grow, 300));
</script></body></html>"""


def test_replay_screenshot_of_a_page_that_grows_by_script_is_full_height(tmp_path: Path) -> None:
    """The full-page screenshot takes the document's scroll height once script growth
    has settled (3,200 px of blocks added over a second after load), not the 800 px the
    view's contents size still says at load."""
    root = tmp_path / "lib"
    with Library.open(root) as lib:
        w = ArchiveWriter(lib)
        w.response("https://grow.example/", GROWING, at=at(2024), page=True)
        w.commit()
    png = tmp_path / "grow.png"
    done = _archiver(
        "--library", str(root), "replay", "https://grow.example/", "--screenshot", str(png)
    )
    assert done.returncode == 0, done.stderr
    image = Image.open(png).convert("RGB")
    width, height = image.size
    assert width == 1280 and 3200 <= height < 4000, image.size
    assert image.getpixel((width // 2, height - 20)) == (255, 128, 0)  # the last block


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor())


class _Refuse(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _no_redirects() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_Refuse())


def _get(
    url: str, opener: urllib.request.OpenerDirector | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with (opener or _opener()).open(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, dict(exc.headers), exc.read()


def test_serve_needs_the_token_and_stays_on_this_origin(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    _library(root)
    with subprocess.Popen(
        [sys.executable, "-m", "archiver_app", "--library", str(root), "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            match = re.search(r"at (http://127\.0\.0\.1:(\d+)/([\w-]+)/)", first)
            assert match, first
            base, port, token = match.groups()
            shell = f"http://127.0.0.1:{port}"
            # Without the cookie the entry address sets, nothing is served.
            status, _, _ = _get(f"{shell}/2020/https://cmd.example/")
            assert status == 403
            status, _, _ = _get(f"{shell}/wrong-token/latest/https://cmd.example/")
            assert status == 403
            browser = _opener()
            status, headers, body = _get(base + "2020/https://cmd.example/", browser)
            assert status == 200 and token not in body.decode()
            assert headers["Referrer-Policy"] == "no-referrer"
            assert "frame-src http://*.localhost:" in headers["Content-Security-Policy"]
            assert headers["Memento-Datetime"] == "Wed, 01 Jan 2020 00:00:00 GMT"
            frame = re.search(
                rb'<iframe src="http://([a-z2-7]{26}\.localhost):(\d+)(/[^"]+)"', body
            )
            assert frame, body
            host, content_port, path = (g.decode() for g in frame.groups())
            content = f"http://127.0.0.1:{content_port}"
            # The content host's name is the capability: no cookie needed, no other name.
            status, headers, body = _get(content + path, Host=f"{host}:{content_port}")
            assert status == 200 and b"<p>old</p>" in body
            assert "connect-src 'self' http://*.localhost:" in headers["Content-Security-Policy"]
            assert "sandbox allow-scripts" in headers["Content-Security-Policy"]
            # Absolute links now point back at this server, without the token.
            assert b'src="/20200101000000/https://img.example/pic.png"' in body
            status, _, _ = _get(content + path, browser)
            assert status == 421
            status, _, _ = _get(
                f"{content}/latest/https://cmd.example/nope", Host=f"{host}:{content_port}"
            )
            assert status == 404
            # Another Host (DNS rebinding) is refused even with the cookie.
            status, _, _ = _get(f"http://localhost:{port}/latest/https://cmd.example/", browser)
            assert status in (403, 421)
            # A root-relative request is mapped through the Referer a client sends, and
            # sent on to the host of that URL's origin.
            status, headers, _ = _get(
                f"{content}/pic.png",
                _no_redirects(),
                Host=f"{host}:{content_port}",
                Referer=content + "/2024/https://img.example/x",
            )
            assert status == 307, headers
            img = urllib.parse.urlsplit(headers["Location"])
            assert img.path == "/2024/https://img.example/pic.png"
            status, _, body = _get(f"{content}{img.path}", Host=img.netloc)
            assert (status, body) == (200, PNG)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_imported_warc_with_encoded_bodies_replays(tmp_path: Path) -> None:
    """A WARC from another tool (gzip Content-Encoding kept in the record), imported with
    ``archiver import``, replays like a capture."""
    import gzip
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    warc = tmp_path / "other-tool.warc.gz"
    page = b'<html><body style="background: rgb(10, 200, 30)"><p>imported</p></body></html>'
    with warc.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        body = gzip.compress(page)
        headers = [
            ("Content-Type", "text/html"),
            ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(body))),
        ]
        writer.write_record(
            writer.create_warc_record(
                "https://imported.example/",
                "response",
                payload=io.BytesIO(body),
                http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
            )
        )
    root = tmp_path / "lib"
    Library.open(root).close()
    done = _archiver("--library", str(root), "import", str(warc))
    assert done.returncode == 0, done.stderr
    png = tmp_path / "imported.png"
    shot = _archiver(
        "--library", str(root), "replay", "https://imported.example/",
        "--screenshot", str(png), "--width", "320", "--height", "200",
    )  # fmt: skip
    assert shot.returncode == 0, shot.stderr
    assert "served\thttps://imported.example/" in shot.stdout
    assert Image.open(png).convert("RGB").getpixel((300, 180)) == (10, 200, 30)


def test_serve_on_a_busy_port_says_so_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    _library(root)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _archiver("--library", str(root), "serve", "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"archiver: error: port {port} is in use on 127.0.0.1; choose another with --port\n"
    )


def test_replay_of_another_scheme_says_only_web_pages_are_replayed(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    _library(root)
    done = _archiver("--library", str(root), "replay", "file:///etc/passwd")
    assert done.returncode == 2
    assert done.stderr == (
        "archiver: error: unsupported URL scheme 'file' in 'file:///etc/passwd': "
        "only http and https pages can be replayed\n"
    )
