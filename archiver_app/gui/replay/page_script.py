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

A worklet's module (``addModule()``) is fetched in CORS mode too: its address is given.

A worker is no page: its script is served with this one first (:func:`for_worker`), so its
``fetch()``, XHR and ``importScripts()`` are given archive addresses too. A worker's
requests never reach the interceptor, so ``Worker`` and ``SharedWorker`` (a page's, and a
worker's for the workers it makes) first tell the scheme handler (a synchronous request to
the app's own host) which address is a worker's; a worker made from a ``blob:`` is made
from a new blob, this script first and its modules' full addresses pointed at the archive
as in served scripts. ``import()`` and ``import ... from`` are syntax no script can wrap:
their full addresses are pointed at the archive in the script text as it is served
(:func:`archiver_app.replay.rewrite.prefix_module_imports`), and a specifier a script
computes is given to this script's function first
(:mod:`archiver_app.replay.dynamic_import`).

The engine keeps no cookies for the archive schemes, so ``document.cookie`` is the view's
(:mod:`archiver_app.replay.cookies`): reading and writing it is a synchronous request to
the app's own host naming the document's address, which the scheme handler answers from
the tab's cookie jar for that address if the request comes from the same archived origin.

The script only ever changes ``http:``/``https:`` into ``archive-http:``/``archive-https:``:
a page that undoes it gets the redirect, which fails, and nothing more.
"""

from __future__ import annotations

import json
import re

from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineScript

from archiver_app.gui.replay.schemes import ACTION_HOST
from archiver_app.replay.cookies import DOCUMENT_COOKIE_JS
from archiver_app.replay.dynamic_import import IMPORT_HOOK
from archiver_app.replay.rewrite import MODULE_IMPORT

SCRIPT_NAME = "archiver-archive-schemes"
ARCHIVE_SCHEMES_JS = r"""(function archiverSchemes() {
"use strict";
var g = self;
function into(value, always) {  // always: the address in full, archived or not
  var u, base = g.document ? g.document.baseURI : g.location.href;
  try { u = new URL(String(value), base); } catch (e) { return value; }
  return /^https?:$/.test(u.protocol) ? "archive-" + u.href : always ? u.href : value;
}
var nativeFetch = g.fetch;
if (nativeFetch) {
  g.fetch = function fetch(input, init) {
    if (input instanceof Request) {
      var url = into(input.url);
      if (url !== input.url) { input = new Request(url, input); }
    } else {
      input = into(input);
    }
    return nativeFetch.call(g, input, init);
  };
}
var xhr = g.XMLHttpRequest && XMLHttpRequest.prototype;
if (xhr && xhr.open) {
  var open = xhr.open;
  xhr.open = function open_(method, url) {
    var args = Array.prototype.slice.call(arguments);  // async defaults only when absent
    if (args.length > 1) { args[1] = into(url); }
    return open.apply(this, args);
  };
}
var nativeImportScripts = g.importScripts;  // a classic worker's
if (nativeImportScripts) {
  g.importScripts = function importScripts() {
    return nativeImportScripts.apply(g, Array.prototype.map.call(arguments, into));
  };
}
if (xhr && xhr.open) {  // workers (a page's, a worker's): their scripts get this one too
  var announce = function (url) {  // the view marks the address a worker's (synchronously:
    try {                          // before the worker asks for it)
      var x = new XMLHttpRequest();
      var note = "archive-https://@ACTION_HOST@/worker?url=" + encodeURIComponent(url);
      open.call(x, "GET", note, false);
      x.send();
    } catch (e) {}
  };
  var fromBlob = function (url) {  // a worker made from a blob: the same, in a new blob
    var x = new XMLHttpRequest();
    open.call(x, "GET", url, false);
    x.send();
    var text = x.responseText.replace(new RegExp(@MODULE_IMPORT@, "g"), "$1archive-$2");
    var at = (/^\uFEFF?\s*(["'])use strict\1\s*;?/.exec(text) || [""])[0].length;
    var own = "\n(" + archiverSchemes + ")();\n";  // a "use strict" stays first
    var blob = new Blob([text.slice(0, at), own, text.slice(at)], {type: "text/javascript"});
    return URL.createObjectURL(blob);  // kept: the worker may read it after this returns
  };
  ["Worker", "SharedWorker"].forEach(function (name) {
    var Native = g[name];
    if (!Native) { return; }
    var Wrapped = function (url, options) {
      var args = Array.prototype.slice.call(arguments), abs = into(url, true);
      if (/^archive-https?:/.test(abs)) {
        announce(abs);
        args[0] = abs;  // https://this-host/w.js is this page's origin, as it was live
      } else if (/^blob:/i.test(String(url))) {
        try { args[0] = fromBlob(String(url)); } catch (e) {}
      }
      return Reflect.construct(Native, args, new.target || Wrapped);
    };
    Wrapped.prototype = Native.prototype;
    g[name] = Wrapped;
  });
}
(@DOCUMENT_COOKIE_JS@)(g, function (page) {  // the view keeps cookies (see above)
  return "archive-https://@ACTION_HOST@/cookie?url=" + encodeURIComponent(page);
});
var worklet = g.Worklet && Worklet.prototype;  // audio and paint worklets' modules
if (worklet && worklet.addModule) {
  var addModule = worklet.addModule;
  worklet.addModule = function addModule_(url) {
    var args = Array.prototype.slice.call(arguments);
    if (args.length) { args[0] = into(url); }
    return addModule.apply(this, args);
  };
}
try {  // import(specifier) of served scripts, when not a plain string: dynamic_import.py
  Object.defineProperty(g, "@IMPORT_HOOK@", {value: function (specifier) {
    return into(specifier);
  }});
} catch (e) {}
var NativeEventSource = g.EventSource;
if (NativeEventSource) {
  var EventSource = function EventSource(url, init) {
    return new NativeEventSource(into(url), init);
  };
  EventSource.prototype = NativeEventSource.prototype;
  ["CONNECTING", "OPEN", "CLOSED"].forEach(function (name) {
    EventSource[name] = NativeEventSource[name];
  });
  g.EventSource = EventSource;
}
})();"""
for _name, _value in {
    "@DOCUMENT_COOKIE_JS@": DOCUMENT_COOKIE_JS,
    "@ACTION_HOST@": ACTION_HOST,
    "@IMPORT_HOOK@": IMPORT_HOOK,
    "@MODULE_IMPORT@": json.dumps(MODULE_IMPORT.pattern.decode()),  # the served scripts' rule
}.items():
    ARCHIVE_SCHEMES_JS = ARCHIVE_SCHEMES_JS.replace(_name, _value)


def for_worker(script: bytes) -> bytes:
    """A worker's ``script`` with :data:`ARCHIVE_SCHEMES_JS` first, after its ``"use
    strict"`` directive if it has one (which must stay first to count); a module worker's
    ``import`` declarations are hoisted above it, as they must be."""
    directive = _USE_STRICT.match(script)
    at = directive.end() if directive else 0
    return script[:at] + b"\n" + ARCHIVE_SCHEMES_JS.encode() + b"\n" + script[at:]


_USE_STRICT = re.compile(rb"""\A(?:\xef\xbb\xbf)?\s*(["'])use strict\1\s*;?""")


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
