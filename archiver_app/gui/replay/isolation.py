"""Chromium switches that keep every QtWebEngine page of this process off the network.

The request interceptor (``network.py``) redirects what Chromium asks it about, but not
everything is asked: ``<link rel=preconnect>``, DNS prefetch and the loading predictor open
sockets without a request. The replay view is the only web view of the app, so the whole
engine is cut off below the interceptor:

- every connection goes through a proxy that does not exist (``127.0.0.1`` port 1, which
  Chromium also counts as an unsafe port), loopback included (``<-loopback>`` removes the
  implicit bypass), and there is no DIRECT fallback: a TCP connection to any host other
  than that dead proxy cannot be made;
- WebRTC may only use proxied TCP, so no STUN or TURN datagram leaves either;
- DNS prefetch, prerendering, speculation-rule prefetch, background networking and
  hyperlink pings are switched off, so nothing even tries.

Archived pages are served by the in-process scheme handler, which never touches the
network, so none of this affects replay. The switches are read once, when the first
QApplication is built: :func:`apply_network_isolation` must run before it.
"""

from __future__ import annotations

import os

FLAGS_ENV = "QTWEBENGINE_CHROMIUM_FLAGS"
DEAD_PROXY = "http://127.0.0.1:1"
ISOLATION_FLAGS = (
    f"--proxy-server={DEAD_PROXY}",
    "--proxy-bypass-list=<-loopback>",
    # WebRTC would send UDP (STUN) straight to any address: only proxied TCP is left.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    "--no-pings",
    "--disable-background-networking",
    "--disable-features=Prerender2,SpeculationRulesPrefetchFuture,"
    "SpeculationRulesPrefetchProxy,PreloadingHeuristics,NetworkPrediction",
)


def apply_network_isolation() -> None:
    """Add :data:`ISOLATION_FLAGS` to ``QTWEBENGINE_CHROMIUM_FLAGS`` (idempotent).

    QtWebEngine splits that variable on spaces, so no flag may contain one.
    """
    current = os.environ.get(FLAGS_ENV, "").split()
    missing = [flag for flag in ISOLATION_FLAGS if flag not in current]
    if missing:
        os.environ[FLAGS_ENV] = " ".join([*current, *missing])
