"""``document.cookie`` of one replay session (a tab, a ``serve`` run), kept in memory.

A replayed page lives where the browser keeps no cookies for it (the app's archive
scheme; a cross-site frame in ``archiver serve``), so the replay keeps them: what a
page's script writes to ``document.cookie`` and what the archived ``Set-Cookie`` headers
of the answers it was served said. A script reads the cookies of its own page's address,
as a browser's ``document.cookie`` does (RFC 6265): host or ``Domain=`` match, path,
``Secure`` only on ``https``, never an ``HttpOnly`` one. So one archived site never sees
another's cookies. Nothing is sent anywhere: the archive answers the same whatever
cookies a request would have carried.

An ``Expires`` date is a deletion when it is before the reference time (now for a
script, the capture's time for an archived header); otherwise the cookie lasts the
session, like every cookie here. ``Max-Age`` counts from now. ``Domain=`` is refused
when it does not contain the page's host or names a single label (``com``); the public
suffix list is not consulted.

Threading contract: every method takes the jar's lock; any thread may call them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from archiver_app.replay.response import ORIG_PREFIX, ReplayResponse
from archiver_app.warc.timestamps import parse_ts

# ``document.cookie`` for a window ``win``: ``address(page)`` is where the replay answers
# for the cookies of the document at ``page`` (``&set=`` adds what is written). A
# synchronous request, as ``document.cookie`` is synchronous; the XHR functions are the
# ones at install time, so a page wrapping them later sees none of these requests.
DOCUMENT_COOKIE_JS = r"""function archiverCookies(win, address) {
  var proto = win.Document && win.Document.prototype, X = win.XMLHttpRequest;
  if (!proto || !X || !Object.getOwnPropertyDescriptor(proto, "cookie")) { return; }
  var open = X.prototype.open, send = X.prototype.send;
  var jar = function (doc, written) {
    try {
      var page = String(doc.URL);  // about:blank, srcdoc: their creator's address
      if (/^about:/i.test(page)) { page = String(doc.baseURI); }
      var x = new X(), note = address(page);
      if (written !== undefined) { note += "&set=" + encodeURIComponent(written); }
      open.call(x, "GET", note, false);
      send.call(x);
      return x.status === 200 ? x.responseText : "";
    } catch (e) { return ""; }
  };
  Object.defineProperty(proto, "cookie", {
    configurable: true, enumerable: true,
    get: function cookie() { return jar(this); },
    set: function cookie(value) { jar(this, String(value)); }
  });
}"""
MAX_COOKIES = 3000  # Chromium's per-profile limit; the oldest go first past it


@dataclass
class _Cookie:
    name: str
    value: str
    domain: str  # lower case, no leading dot
    host_only: bool
    path: str
    secure: bool
    http_only: bool
    expires_at: float | None  # time.time() after which it is gone (Max-Age); None: session
    order: int  # creation order, kept when a cookie is replaced (as browsers do)


class CookieJar:
    """Cookies by (domain, path, name), for the pages of one replay tab or serve run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cookies: dict[tuple[str, str, str], _Cookie] = {}
        self._made = 0

    def set_from_script(self, url: str, text: str) -> None:
        """``document.cookie = text`` in the page at ``url`` (its original address)."""
        self._set(url, text, time.time(), from_script=True)

    def set_from_header(self, url: str, value: str, at: datetime | None = None) -> None:
        """An archived ``Set-Cookie: value`` answering ``url``, captured at ``at``."""
        when = at.timestamp() if at is not None else time.time()
        self._set(url, value, when, from_script=False)

    def set_from_response(self, url: str, response: ReplayResponse) -> None:
        """Every archived ``Set-Cookie`` of ``response``, served for ``url``."""
        wanted = (ORIG_PREFIX + "Set-Cookie").lower()
        values = [v for k, v in response.headers if k.lower() == wanted]
        if values:
            at = parse_ts(response.ts) if response.ts.isdigit() else None
            for value in values:
                self.set_from_header(url, value, at)

    def for_script(self, url: str) -> str:
        """What ``document.cookie`` reads in the page at ``url``."""
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path or "/"
        now = time.time()
        with self._lock:
            for key, cookie in list(self._cookies.items()):
                if cookie.expires_at is not None and cookie.expires_at <= now:
                    del self._cookies[key]
            shown = [
                c
                for c in self._cookies.values()
                if not c.http_only
                and (parts.scheme == "https" or not c.secure)
                and _domain_matches(host, c)
                and _path_matches(path, c.path)
            ]
        shown.sort(key=lambda c: (-len(c.path), c.order))
        return "; ".join(f"{c.name}={c.value}" if c.name else c.value for c in shown)

    def _set(self, url: str, text: str, reference: float, *, from_script: bool) -> None:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        pair, _, attributes = text.partition(";")
        name, eq, value = pair.partition("=")
        name, value = (name.strip(), value.strip()) if eq else ("", name.strip())
        if not host or (not name and not value) or len(name) + len(value) > 4096:
            return
        attrs = _attributes(attributes)
        domain = attrs.get("domain", "").lstrip(".").lower()
        if domain and domain != host and ("." not in domain or not host.endswith("." + domain)):
            return  # another site's domain, or a top-level one
        path = attrs.get("path", "")
        if not path.startswith("/"):
            path = _default_path(parts.path)
        secure = "secure" in attrs
        if secure and parts.scheme != "https":
            return
        http_only = "httponly" in attrs
        if from_script and http_only:
            return  # a script cannot set an HttpOnly cookie (Chromium drops it)
        cookie = _Cookie(name, value, domain or host, not domain, path, secure, http_only, None, 0)
        expired = _apply_expiry(cookie, attrs, reference)
        key = (cookie.domain, cookie.path, name)
        with self._lock:
            old = self._cookies.get(key)
            if old is not None and old.http_only and from_script:
                return  # nor replace one
            if expired:
                self._cookies.pop(key, None)
                return
            self._made += 1
            cookie.order = old.order if old is not None else self._made
            self._cookies[key] = cookie
            if len(self._cookies) > MAX_COOKIES:
                oldest = min(self._cookies, key=lambda k: self._cookies[k].order)
                del self._cookies[oldest]


def _attributes(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in text.split(";"):
        key, _, value = item.partition("=")
        if key.strip():
            found[key.strip().lower()] = value.strip()
    return found


def _apply_expiry(cookie: _Cookie, attrs: dict[str, str], reference: float) -> bool:
    """Set ``cookie``'s expiry from ``Max-Age`` (which wins) or ``Expires``; True when
    the cookie is already expired, which deletes it."""
    if "max-age" in attrs:
        try:
            seconds = int(attrs["max-age"])
        except ValueError:
            seconds = None
        if seconds is not None:
            cookie.expires_at = time.time() + seconds
            return seconds <= 0
    if "expires" in attrs:
        try:
            expires = parsedate_to_datetime(attrs["expires"])
        except (TypeError, ValueError):
            return False
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        return expires.timestamp() <= reference
    return False


def _domain_matches(host: str, cookie: _Cookie) -> bool:
    if cookie.host_only:
        return host == cookie.domain
    return host == cookie.domain or host.endswith("." + cookie.domain)


def _path_matches(path: str, cookie_path: str) -> bool:
    if path == cookie_path:
        return True
    if not path.startswith(cookie_path):
        return False
    return cookie_path.endswith("/") or path[len(cookie_path)] == "/"


def _default_path(path: str) -> str:
    """RFC 6265 5.1.4: the directory of the page's path."""
    if not path.startswith("/") or path.count("/") == 1:
        return "/"
    return path[: path.rindex("/")]
