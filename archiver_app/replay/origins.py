"""One browser origin per archived origin for ``archiver serve``: ``<label>.localhost``.

Archived pages of different origins must not share a browser origin, or a script in one
archived site reads every other one. Each archived origin (scheme, host, port) is served
from its own content host ``<label>.localhost:<content port>``: browsers resolve
``*.localhost`` to loopback without asking DNS (RFC 6761), and each name is its own
origin and its own site, so the same-origin policy and CORS keep archived sites apart
as they were on the live web.

The label is an HMAC of the archived origin under a key made for this run (26 base32
characters, 130 bits), so the host name is a capability: only names this server issued
are answered, and nobody can make one without the key. That is what lets content hosts
work without a cookie: a cookie set by ``<label>.localhost`` inside the shell's frame is
a third-party cookie, which browsers increasingly refuse or partition.

Threading: :class:`ContentHosts` may be shared between threads (one dict, written under
a lock, read without one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
LABEL_CHARS = 26


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL (lower case, default port left out), or
    None when ``url`` has no such origin."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


class ContentHosts:
    """Issue and recognise the content host names of one server run.

    Args:
        port: the content listener's port, part of every host name.
        key: the HMAC key (random per run by default).
    """

    def __init__(self, port: int, key: bytes | None = None) -> None:
        self.port = port
        self._key = key or secrets.token_bytes(32)
        self._origins: dict[str, str] = {}  # label -> archived origin
        self._lock = threading.Lock()

    @property
    def source(self) -> str:
        """Every content host, as a CSP source expression."""
        return f"http://*.localhost:{self.port}"

    def label(self, origin: str) -> str:
        digest = hmac.new(self._key, origin.encode(), hashlib.sha256).digest()
        text = base64.b32encode(digest).decode().lower()[:LABEL_CHARS]
        if text not in self._origins:
            with self._lock:
                self._origins[text] = origin
        return text

    def host(self, origin: str) -> str:
        """The ``Host`` (name and port) serving ``origin``."""
        return f"{self.label(origin)}.localhost:{self.port}"

    def base(self, origin: str) -> str:
        """``http://<label>.localhost:<port>`` for ``origin``."""
        return f"http://{self.host(origin)}"

    def base_for_url(self, url: str) -> str | None:
        """The content host base of ``url``'s origin, or None when it has none."""
        origin = origin_of(url)
        return None if origin is None else self.base(origin)

    def origin_of_host(self, host: str | None) -> str | None:
        """The archived origin a ``Host`` header names, or None unless it is exactly a
        name this run issued, with the content port."""
        if not host:
            return None
        name, sep, port = host.rpartition(":")
        if not sep or port != str(self.port) or not name.endswith(".localhost"):
            return None
        label = name[: -len(".localhost")]
        if len(label) != LABEL_CHARS:
            return None
        return self._origins.get(label)

    def origin_of_base(self, origin_header: str | None) -> str | None:
        """The archived origin an ``Origin`` request header names (a content host)."""
        if not origin_header or not origin_header.startswith("http://"):
            return None
        return self.origin_of_host(origin_header[len("http://") :])
