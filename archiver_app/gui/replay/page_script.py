"""The script the replay view runs first in every archived page and frame.

A replayed page lives on ``archive-https://host/...``; a request it writes with a full
``http(s)://`` address reaches the archive through the interceptor's redirect. Chromium
refuses that redirect for a CORS request (``fetch()``, XHR) to another site: such a request
redirected to a non-HTTP scheme fails before the scheme handler sees it ("Failed to
fetch"), however the archive scheme is registered. So ``fetch()`` and XHR are given the
archive address itself, as the interceptor would have made it; the scheme handler still
decides what a script may read (the archived CORS grant). The addresses written in HTML
and CSS (a module script, a web font) are pointed at the archive when they are served
(:func:`archiver_app.replay.rewrite.prefix_schemes`).

The script only ever changes ``http:``/``https:`` into ``archive-http:``/``archive-https:``:
a page that undoes it gets the redirect, which fails, and nothing more.
"""

from __future__ import annotations

from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineScript

SCRIPT_NAME = "archiver-archive-schemes"
ARCHIVE_SCHEMES_JS = r"""(function () {
"use strict";
function into(value) {
  var u;
  try { u = new URL(String(value), document.baseURI); } catch (e) { return value; }
  return /^https?:$/.test(u.protocol) ? "archive-" + u.href : value;
}
var nativeFetch = window.fetch;
if (nativeFetch) {
  window.fetch = function fetch(input, init) {
    if (input instanceof Request) {
      var url = into(input.url);
      if (url !== input.url) { input = new Request(url, input); }
    } else {
      input = into(input);
    }
    return nativeFetch.call(window, input, init);
  };
}
var xhr = window.XMLHttpRequest && XMLHttpRequest.prototype;
if (xhr && xhr.open) {
  var open = xhr.open;
  xhr.open = function open_(method, url) {
    var args = Array.prototype.slice.call(arguments);  // async defaults only when absent
    if (args.length > 1) { args[1] = into(url); }
    return open.apply(this, args);
  };
}
var NativeEventSource = window.EventSource;
if (NativeEventSource) {
  var EventSource = function EventSource(url, init) {
    return new NativeEventSource(into(url), init);
  };
  EventSource.prototype = NativeEventSource.prototype;
  ["CONNECTING", "OPEN", "CLOSED"].forEach(function (name) {
    EventSource[name] = NativeEventSource[name];
  });
  window.EventSource = EventSource;
}
})();"""


def install_page_script(profile: QWebEngineProfile) -> None:
    """Run :data:`ARCHIVE_SCHEMES_JS` in every page and frame of ``profile``, before the
    page's own scripts, in their world (it must replace the functions they call)."""
    script = QWebEngineScript()
    script.setName(SCRIPT_NAME)
    script.setSourceCode(ARCHIVE_SCHEMES_JS)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld)
    script.setRunsOnSubFrames(True)
    profile.scripts().insert(script)
