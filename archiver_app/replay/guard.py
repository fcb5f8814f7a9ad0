"""The script ``archiver serve`` puts first in every archived HTML page.

What a server's headers cannot stop in the browser:

- Chromium opens a TCP connection to a navigation's host as soon as the navigation
  starts, before the frame's Content-Security-Policy refuses it. The guard cancels a
  navigation leaving the archive in the page, through the Navigation API's ``navigate``
  event, before the browser begins it.
- WebRTC is outside CSP: ``RTCPeerConnection`` with a STUN or TURN server reaches any
  host. The guard removes it (a non-configurable ``undefined``, which no script can put
  back).

- A frame still showing its initial ``about:blank`` document (one a script made, or an
  ``<iframe>`` without ``src``) fires no ``navigate`` event: the Navigation API disables
  its events there (HTML's "has entries and events disabled"). So the guard also points
  the URLs scripts set into the archive: the ``src`` of frames, the ``href`` of links and
  areas, the ``action`` of forms (by property or ``setAttribute``) and ``window.open``'s
  URL become ``/<timestamp>/<URL>`` on the page's own host, as rewriting does for the
  URLs written in the page.

- A framed page is another site's frame to the browser, which keeps no cookies for it
  (third-party cookies are blocked, and ``SameSite=Lax``, the default, is never sent or
  read there). The guard gives ``document.cookie`` to the server instead
  (:mod:`archiver_app.replay.cookies`): a synchronous request to :data:`COOKIE_PATH` on
  the page's own host.

All this holds in the page's window and in every same-origin frame the page makes
(``about:blank``, ``srcdoc``, ``blob:``): DOM insertion methods, ``innerHTML`` and
``document.write`` protect a new frame before they return, and a mutation observer those
the parser inserts, before the next script runs. The guard runs before any archived
script, so none can remove its listeners; a listener added later cannot undo a cancelled
event.

Its limit: a script that navigates a frame still on its initial ``about:blank`` through
that frame's ``location`` (``frames[0].location = ...``, ``location.assign``...) is seen
by nothing in the page (``Location`` cannot be wrapped: its members are unforgeable).
Chromium then opens a bare connection to the host (a preconnect made when the navigation
begins) before it checks ``frame-src`` and refuses the navigation. No response header can
move that check earlier; ``docs/replay.md`` says why, and the hostile-page suite keeps the
case as a named known gap. The sandbox and CSP of :mod:`archiver_app.replay.server`
still refuse whatever the guard lets through.
"""

from __future__ import annotations

from archiver_app.replay.cookies import DOCUMENT_COOKIE_JS

NAVIGATION_GUARD = rb"""<script>(function () {
var seen = new WeakSet();
function leaves(url) {
  var u;
  try { u = new URL(url); } catch (e) { return true; }
  if (/^(data|blob|about|javascript):$/.test(u.protocol)) { return false; }
  return u.origin !== location.origin;
}
var stamp = (location.pathname.match(/^\/(\d{4,17}|latest)\//) || [0, "latest"])[1];
function into(value) {
  var u;
  try { u = new URL(String(value), document.baseURI); } catch (e) { return value; }
  if (!leaves(u.href)) { return value; }
  if (/^https?:$/.test(u.protocol)) { return location.origin + "/" + stamp + "/" + u.href; }
  return "about:blank";
}
var TARGETS = {iframe: "src", frame: "src", a: "href", area: "href", form: "action"};
function targeted(el, name) {
  return !!el && TARGETS[el.localName] === String(name).toLowerCase();
}
function urls(win) {
  [["HTMLIFrameElement", "src"], ["HTMLFrameElement", "src"], ["HTMLAnchorElement", "href"],
   ["HTMLAreaElement", "href"], ["HTMLFormElement", "action"]].forEach(function (pair) {
    var C = win[pair[0]], d = C && Object.getOwnPropertyDescriptor(C.prototype, pair[1]);
    if (!d || !d.set) { return; }
    Object.defineProperty(C.prototype, pair[1], {configurable: true, enumerable: d.enumerable,
      get: d.get, set: function (v) { d.set.call(this, into(v)); }});
  });
  var proto = win.Element && win.Element.prototype;
  var setAttr = proto.setAttribute, setAttrNS = proto.setAttributeNS;
  proto.setAttribute = function (name, value) {
    return setAttr.call(this, name, targeted(this, name) ? into(value) : value);
  };
  proto.setAttributeNS = function (ns, name, value) {
    return setAttrNS.call(this, ns, name, targeted(this, name) ? into(value) : value);
  };
  var open = win.open;
  win.open = function (url) {
    var args = Array.prototype.slice.call(arguments);
    if (args.length) { args[0] = into(url); }
    return open.apply(this, args);
  };
}
function children(win) {
  try { for (var i = 0; i < win.frames.length; i++) { protect(win.frames[i]); } } catch (e) {}
}
function wrap(win, proto, names) {
  if (!proto) { return; }
  names.forEach(function (name) {
    var orig = proto[name];
    if (typeof orig !== "function") { return; }
    proto[name] = function () { var r = orig.apply(this, arguments); children(win); return r; };
  });
}
function setters(win, proto, names) {
  names.forEach(function (name) {
    var d = proto && Object.getOwnPropertyDescriptor(proto, name);
    if (!d || !d.set) { return; }
    Object.defineProperty(proto, name, {configurable: true, enumerable: d.enumerable, get: d.get,
      set: function (v) { d.set.call(this, v); children(win); }});
  });
}
var keepCookies = @DOCUMENT_COOKIE_JS@;
function protect(win) {
  try {
    if (!win || seen.has(win)) { return; }
    seen.add(win);
    keepCookies(win, function (page) {
      return location.origin + "@COOKIE_PATH@?url=" + encodeURIComponent(page);
    });
    ["RTCPeerConnection", "webkitRTCPeerConnection"].forEach(function (name) {
      try {
        Object.defineProperty(win, name, {value: undefined, writable: false, configurable: false});
      } catch (e) {}
    });
    if (win.navigation) {
      win.navigation.addEventListener("navigate", function (e) {
        if (e.cancelable && leaves(e.destination.url)) { e.preventDefault(); }
      });
    }
    urls(win);
    wrap(win, win.Node && win.Node.prototype, ["appendChild", "insertBefore", "replaceChild"]);
    wrap(win, win.Element && win.Element.prototype, ["append", "prepend", "after", "before",
      "replaceWith", "insertAdjacentElement", "insertAdjacentHTML", "setHTMLUnsafe"]);
    wrap(win, win.Document && win.Document.prototype, ["write", "writeln"]);
    setters(win, win.Element && win.Element.prototype, ["innerHTML", "outerHTML"]);
    new win.MutationObserver(function () { children(win); })
      .observe(win.document, {childList: true, subtree: true});
    children(win);
  } catch (e) {}
}
protect(window);
})();</script>"""
COOKIE_PATH = "/__archiver__/cookie"  # on each content host: its document.cookie
NAVIGATION_GUARD = NAVIGATION_GUARD.replace(
    b"@DOCUMENT_COOKIE_JS@", DOCUMENT_COOKIE_JS.encode()
).replace(b"@COOKIE_PATH@", COOKIE_PATH.encode())
