"""The replay view's served HTML and CSS name cross-host resources by their archive address
(``prefix_schemes``): only resource addresses, never the page's text."""

from __future__ import annotations

from archiver_app.replay.rewrite import prefix_schemes


def test_resource_addresses_get_the_archive_scheme_and_nothing_else_changes() -> None:
    page = (
        b'<script type=module src="http://o.example/m.js"></script>'
        b"<a href='HTTPS://x.example/'>see https://x.example/</a>"
        b'<style>@font-face { src: url( "https://f.example/a.woff2") }'
        b' @import "http://c.example/x.css";</style>'
        b'<img src=//p.example/x.png data-src="http://lazy.example/">'
        b"<script>fetch('https://api.example/')</script>"
    )
    assert prefix_schemes(page, b"archive-") == (
        b'<script type=module src="archive-http://o.example/m.js"></script>'
        b"<a href='archive-https://x.example/'>see https://x.example/</a>"
        b'<style>@font-face { src: url( "archive-https://f.example/a.woff2") }'
        b' @import "archive-http://c.example/x.css";</style>'
        b'<img src=//p.example/x.png data-src="http://lazy.example/">'
        b"<script>fetch('https://api.example/')</script>"
    )
    css = b"@font-face{src:url(https://fonts.example/s.ttf)} h1{background:url(/b.png)}"
    assert prefix_schemes(css, b"archive-") == (
        b"@font-face{src:url(archive-https://fonts.example/s.ttf)} h1{background:url(/b.png)}"
    )
