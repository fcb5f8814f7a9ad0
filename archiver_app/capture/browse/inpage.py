"""What runs inside each page of a browsing session, and the notes it sends back.

A page is saved as it was when the user left it. The DOM of a document that is being
left is gone by the time DevTools reports the next one, so the page reports it itself: an
init script (in every top-level document, before the page's own scripts) serialises the
DOM, title, language, text and links synchronously and hands them to a DevTools binding
(:data:`NOTE_BINDING`, ``Runtime.addBinding``), whose event leaves the renderer at once,
even from a document being unloaded:

- on ``beforeunload`` (the browser is about to load another document in the tab: the
  DOM is still whole and the next request not yet sent) and ``pagehide`` (the tab closes);
- before ``history.pushState``/``replaceState`` moves to another view, and on
  ``popstate``/``hashchange`` when the view changed (single-page apps: the listener is
  registered before the app's, so it runs before the app draws the next view).

A view is another page when its address differs other than by a plain anchor
(:func:`page_key`): ``#section`` is the same page, ``#/route`` and ``#!route`` are not.
The page also names its password inputs (``name`` and ``id`` of each ``<input
type=password>``) when one is changed or submitted, or Enter is pressed in it, before the
request that sends it: the session's recorder keeps those fields' values out of the
request bodies it writes (:func:`parse_secret_fields`, ``NetworkRecorder.secret_fields``).
A file chosen in a file input is read and sent as it is chosen (a ``files`` note): the
browser uploads it from disk, out of DevTools' sight (:mod:`.uploads`).
The script also counts DOM changes and scrolls (``window.__archiverBrowse.tick()``), so
the session knows when the page changed since its last snapshot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from archiver_app.capture.browse.uploads import MAX_CHOSEN_BYTES
from archiver_app.capture.extract import PageFacts, facts_from
from archiver_app.urls import route_fragment

#: The DevTools binding the init script calls with a note (a JSON string).
NOTE_BINDING = "__archiverBrowseNote"

#: Notes larger than this are dropped (the periodic snapshot stands in): a hostile page
#: cannot make the session hold gigabytes.
MAX_NOTE_CHARS = 64 << 20

INIT_SCRIPT = """
(() => {
  if (window.top !== window || window.__archiverBrowse) return;
  const BINDING = "__BINDING__";
  const key = (href) => {
    try {
      const u = new URL(href, location.href);
      const h = u.hash;
      const route = h.startsWith('#/') || h.startsWith('#!') ? h : '';
      return u.origin + u.pathname + u.search + route;
    } catch (e) { return String(href); }
  };
  let here = location.href;
  let ticks = 0;
  const send = (url) => {
    try {
      const binding = window[BINDING];
      if (typeof binding !== 'function') return;
      const doc = document;
      const html = doc.documentElement;
      const doctype = doc.doctype ? new XMLSerializer().serializeToString(doc.doctype) : '';
      const links = [];
      for (const a of doc.querySelectorAll('a[href], area[href]')) links.push(a.href);
      binding(JSON.stringify({
        kind: 'leave', url: url,
        dom: doctype + (html ? html.outerHTML : ''),
        title: doc.title || '',
        lang: (html && html.getAttribute('lang')) || '',
        text: doc.body ? doc.body.innerText : (html ? html.textContent : ''),
        links: links,
      }));
    } catch (e) { /* never break the page */ }
  };
  const secrets = (e) => {
    try {
      const t = e.target;
      if (!t || !t.querySelectorAll && !t.form) return;
      const scope = t.form || (t.tagName === 'FORM' ? t : t.getRootNode());
      const names = [];
      for (const i of scope.querySelectorAll('input[type=password]')) {
        if (i.name) names.push(i.name);
        if (i.id) names.push(i.id);
      }
      if (names.length && typeof window[BINDING] === 'function')
        window[BINDING](JSON.stringify({kind: 'secret-fields', names: names}));
    } catch (err) { /* never break the page */ }
  };
  document.addEventListener('change', (e) => {
    if (e.target && e.target.type === 'password') secrets(e);
  }, true);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target && e.target.type === 'password') secrets(e);
  }, true);
  document.addEventListener('submit', secrets, true);
  // a chosen file goes from disk to the server, never through DevTools: read it now
  document.addEventListener('change', (e) => {
    try {
      const t = e.target;
      if (!t || t.type !== 'file' || !t.files || !t.files.length) return;
      let room = __MAX_FILES__;
      const chosen = Array.from(t.files).filter((f) => (room -= f.size) >= 0 && f.size > 0);
      Promise.all(chosen.map((f) => new Promise((done) => {
        const reader = new FileReader();
        reader.onload = () => {
          const url = String(reader.result);
          done({name: f.name, data: url.slice(url.indexOf(',') + 1)});
        };
        reader.onerror = () => done(null);
        reader.readAsDataURL(f);
      }))).then((read) => {
        const files = read.filter(Boolean);
        if (files.length && typeof window[BINDING] === 'function')
          window[BINDING](JSON.stringify({kind: 'files', files: files}));
      });
    } catch (err) { /* never break the page */ }
  }, true);
  const moved = () => {
    if (key(here) !== key(location.href)) send(here);
    here = location.href;
  };
  for (const name of ['pushState', 'replaceState']) {
    const original = history[name];
    history[name] = function (state, title, url) {
      if (url !== undefined && url !== null && key(url) !== key(here)) send(here);
      const result = original.apply(this, arguments);
      here = location.href;
      return result;
    };
  }
  window.addEventListener('popstate', moved, true);
  window.addEventListener('hashchange', moved, true);
  // beforeunload: before the request for the next document is even sent, while this one
  // is whole; pagehide: a tab closing (the session keeps the first note of a page)
  window.addEventListener('beforeunload', () => send(location.href), true);
  window.addEventListener('pagehide', () => send(location.href), true);
  const count = () => { ticks += 1; };
  window.addEventListener('scroll', count, {capture: true, passive: true});
  const observe = () => new MutationObserver(count).observe(document, {
    subtree: true, childList: true, attributes: true, characterData: true,
  });
  if (document.documentElement) observe();
  else document.addEventListener('DOMContentLoaded', observe, {once: true});
  Object.defineProperty(window, '__archiverBrowse', {value: {tick: () => ticks}});
})();
""".replace("__BINDING__", NOTE_BINDING).replace("__MAX_FILES__", str(MAX_CHOSEN_BYTES))

#: Read by the session's periodic snapshot: -1 where the script is not there (a PDF).
TICK_JS = "window.__archiverBrowse ? window.__archiverBrowse.tick() : -1"


@dataclass(frozen=True)
class LeaveNote:
    """What a page said about itself as the user left it (``url``: the view left)."""

    url: str
    dom: str
    facts: PageFacts


def parse_note(payload: str) -> LeaveNote | None:
    """The note in a binding call's ``payload``; None for anything else (a page can call
    the binding too, so nothing in it is trusted beyond its shape)."""
    if len(payload) > MAX_NOTE_CHARS:
        return None
    try:
        raw = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("kind") != "leave":
        return None
    url, dom = raw.get("url"), raw.get("dom")
    if not isinstance(url, str) or not isinstance(dom, str):
        return None
    return LeaveNote(url=url, dom=dom, facts=facts_from(raw))


def parse_secret_fields(payload: str) -> list[str]:
    """The names of password inputs in a binding call's ``payload`` (at most 50, short
    ones: a page can call the binding too); none for anything else."""
    if len(payload) > 64 << 10:
        return []
    try:
        raw = json.loads(payload)
    except ValueError:
        return []
    if not isinstance(raw, dict) or raw.get("kind") != "secret-fields":
        return []
    names = raw.get("names")
    if not isinstance(names, list):
        return []
    return [n for n in names[:50] if isinstance(n, str) and 0 < len(n) <= 200]


def page_key(url: str) -> str:
    """``url`` without a plain anchor: two addresses with the same key are one page."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return urlunsplit(parts._replace(fragment=route_fragment(parts.fragment)))
