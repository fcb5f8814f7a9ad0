"""The replay view's served HTML and CSS name cross-host resources by their archive address
(``prefix_schemes``): only resource addresses, never the page's text."""

from __future__ import annotations

import time

from archiver_app.replay.rewrite import defuse_integrity, prefix_module_imports, prefix_schemes


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


def test_a_large_page_costs_little_more_than_reading_it() -> None:
    """Each "http" is found at C speed and only what precedes it is matched: a regex
    trying every byte of the page for an attribute took about 0.2 µs a byte (10 s for a
    50 MB page, in the replay view)."""
    text = b"<p>" + b"Some words of text. " * 200 + b'<a href="https://x.example/">x</a>'
    page = text * 500  # 2 MB, a link every 4 kB
    spent = []
    for rewrite in (bytes.lower, lambda p: prefix_schemes(p, b"archive-")):
        times = []
        for _ in range(3):
            started = time.perf_counter()
            rewrite(page)
            times.append(time.perf_counter() - started)
        spent.append(min(times))
    assert spent[1] < 40 * max(spent[0], 0.0005), spent  # was over 400 times
    assert prefix_schemes(page, b"archive-").count(b'href="archive-https://') == 500


def test_absolute_module_imports_get_the_archive_scheme_in_scripts_only() -> None:
    js = (
        b"import {a} from 'https://x.example/a.js'; import \"http://y.example/b.js\";\n"
        b"export * from `https://w.example/d.js`; const m = await import( 'https://z.example/c.js');\n"
        b"Array.from('https://no.example/'); lib.import('https://no.example/');"
        b" const t = 'taken from https://no.example/';"
    )
    assert prefix_module_imports(js, b"archive-") == (
        b"import {a} from 'archive-https://x.example/a.js'; import \"archive-http://y.example/b.js\";\n"
        b"export * from `archive-https://w.example/d.js`; const m = await import( 'archive-https://z.example/c.js');\n"
        b"Array.from('https://no.example/'); lib.import('https://no.example/');"
        b" const t = 'taken from https://no.example/';"
    )
    page = (
        b'<p>quoted from "https://text.example/"</p>'
        b"<SCRIPT type=module>import('https://m.example/x.js')</SCRIPT>"
        b"<script>x</script><p>import('https://text.example/')</p>"
    )
    assert prefix_module_imports(page, b"archive-", html=True) == page.replace(
        b"'https://m.example", b"'archive-https://m.example"
    )


def test_module_imports_in_a_hostile_page_take_linear_time() -> None:
    """Script start tags never closed, or with no end to their tag, cost one pass."""
    times = []
    for n in (20_000, 80_000):
        pages = [
            b"<script>import('https://a.example/')</script>" + b"<script>x" * n,
            b"<script " * n + b"import('https://a.example/')</script>",
            b"<script>" * n + b"</script>",
        ]
        started = time.perf_counter()
        for page in pages:
            prefix_module_imports(page, b"archive-", html=True)
        times.append(time.perf_counter() - started)
    assert times[1] < 10 * max(times[0], 0.002), times  # 4x the input: not 16x the time


def test_integrity_in_a_page_of_unclosed_start_tags_costs_one_pass() -> None:
    """Each ``<link`` or ``<script`` start tag no ``>`` closes was read up to 4096 bytes on
    for an ``integrity=`` (120 kB of them: seconds); now the page is read once, as fast as
    one of closed tags."""
    n = 20_000
    closed = b"<link >" * n + b"<script integrity=x>"
    hostile = [b"<link " * n + b"<script integrity=x>", b"<script a=" * n + b" integrity=x>"]
    times = []
    for page in [closed, *hostile]:
        started = time.perf_counter()
        out = defuse_integrity(page)
        times.append(time.perf_counter() - started)
        assert out.endswith(b" x-archive-integrity=x>")
    assert max(times[1:]) < 20 * max(times[0], 0.005), times


def test_every_integrity_of_a_script_or_link_tag_is_renamed_and_only_there() -> None:
    page = (
        b"<a integrity=a><LINK\nrel=x INTEGRITY = b integrity=c>"
        b"<scripts integrity=d><script-x/integrity=e>"
    )
    assert defuse_integrity(page) == (
        b"<a integrity=a><LINK\nrel=x x-archive-INTEGRITY = b x-archive-integrity=c>"
        b"<scripts integrity=d><script-x/x-archive-integrity=e>"
    )
    far = b"<link " + b"x" * 5000 + b" integrity=f>"  # past the reach of a start tag
    assert defuse_integrity(far) == far


def test_every_full_address_of_an_import_map_gets_the_archive_scheme() -> None:
    """Keys and scopes are compared with (archive) module addresses, targets fetched."""
    page = (
        b'<script type="importmap">{"imports": {"lib": "https://cdn.example/lib.js",'
        b' "HTTP://old.example/": "https://new.example/"},'
        b' "scopes": {"https://a.example/": {"x": "/x.js"}}}</script>'
        b'<script type="application/json">{"lib": "https://cdn.example/lib.js"}</script>'
        b'<p>"https://text.example/" import</p>'
    )
    assert prefix_module_imports(page, b"archive-", html=True) == (
        b'<script type="importmap">{"imports": {"lib": "archive-https://cdn.example/lib.js",'
        b' "archive-http://old.example/": "archive-https://new.example/"},'
        b' "scopes": {"archive-https://a.example/": {"x": "/x.js"}}}</script>'
        b'<script type="application/json">{"lib": "https://cdn.example/lib.js"}</script>'
        b'<p>"https://text.example/" import</p>'
    )
