"""Page behaviours: wait for the network to go quiet, scroll to load lazy content, settle.

Every wait is bounded by a deadline, so a page that never stops fetching (a long-poll, a
live ticker) still finishes within the per-page time limit.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from archiver_app.capture.recorder import NetworkRecorder

#: A request open longer than this without activity counts as long-lived (long-poll,
#: stream) and no longer keeps the network from being "quiet".
LONG_LIVED_SECONDS = 2.0

AUTOSCROLL_JS = """
async ([delay, maxSteps]) => {
  const root = document.scrollingElement || document.documentElement;
  let steps = 0;
  let last = -1;
  while (steps < maxSteps) {
    window.scrollBy(0, Math.max(200, Math.floor(window.innerHeight * 0.9)));
    await new Promise(r => setTimeout(r, delay));
    steps++;
    const bottom = window.scrollY + window.innerHeight >= root.scrollHeight - 2;
    if (bottom && window.scrollY === last) break;
    last = window.scrollY;
  }
  window.scrollTo(0, 0);
  return steps;
}
"""


async def wait_network_quiet(
    recorder: NetworkRecorder, *, deadline: float, quiet: float = 0.5
) -> bool:
    """Wait until no request started or ended for ``quiet`` seconds, ignoring long-lived
    ones. Returns False when ``deadline`` (a ``time.monotonic()`` value) came first."""
    while time.monotonic() < deadline:
        now = time.monotonic()
        busy = [
            x
            for x in recorder.in_flight
            if now - x.started < LONG_LIVED_SECONDS or now - x.last_activity < quiet
        ]
        if not busy and recorder.quiet_for() >= quiet:
            return True
        await asyncio.sleep(0.05)
    return False


async def autoscroll(page: Any, *, deadline: float, delay_ms: int = 80, max_steps: int = 80) -> int:
    """Scroll to the bottom in viewport-sized steps (lazy images load), then back to top."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return 0
    steps = await asyncio.wait_for(page.evaluate(AUTOSCROLL_JS, [delay_ms, max_steps]), remaining)
    return int(steps or 0)


#: Images a capture fetches besides those the page loaded: the other candidates of
#: ``srcset`` (a ``2x`` image, a ``<picture>`` source for another width) that replay on
#: another screen asks for, video posters, and the ``data-src``/``data-srcset`` in which
#: lazy-loading scripts keep an image's address until it scrolls into view (one hidden or
#: behind a click never is). Loaded as images in the page (their own request kind, cookies
#: and Referer; a page's ``connect-src`` does not stop them), at most this many, a few at a
#: time; what fails is recorded as it answered. The sources of a
#: ``<video>`` or ``<audio>`` (another format, one not preloaded) are only listed, at most
#: as many: the capture fetches them whole at its end (:func:`.refetch.record_whole_media`).
AUTOFETCH_LIMIT = 200

AUTOFETCH_JS = """
async ([limit, waitMs, budgetMs]) => {
  const stopAt = Date.now() + budgetMs;  // no batch starts after this
  const loaded = new Set(performance.getEntriesByType('resource').map(e => e.name));
  document.querySelectorAll('img').forEach(i => i.currentSrc && loaded.add(i.currentSrc));
  const images = new Set(), media = new Set();
  const add = (into, raw) => {
    if (!raw || !raw.trim()) return;  // an empty attribute is no address (not the page's)
    try {
      const u = new URL(raw.trim(), document.baseURI);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && !loaded.has(u.href)) {
        into.add(u.href);
      }
    } catch (e) {}
  };
  // the URLs of a srcset, parsed as the HTML standard does (a URL may hold commas)
  const candidates = (set) => {
    const out = [];
    let i = 0;
    while (i < set.length) {
      while (i < set.length && /[\\s,]/.test(set[i])) i++;
      let j = i;
      while (j < set.length && !/\\s/.test(set[j])) j++;
      let url = set.slice(i, j);
      i = j;
      if (!url) break;
      if (url.endsWith(',')) {
        out.push(url.replace(/,+$/, ''));
        continue;
      }
      out.push(url);
      for (let depth = 0; i < set.length; i++) {  // the descriptors, to the next comma
        if (set[i] === '(') depth++;
        else if (set[i] === ')') depth--;
        else if (set[i] === ',' && depth <= 0) { i++; break; }
      }
    }
    return out;
  };
  const sets = ['srcset', 'data-srcset', 'imagesrcset'];
  document.querySelectorAll(
    'img[srcset], img[data-srcset], picture source[srcset], picture source[data-srcset], '
    + 'link[rel=preload][imagesrcset]'
  ).forEach(el => sets.forEach(name => candidates(el.getAttribute(name) || '')
    .forEach(c => c && add(images, c))));
  // lazy-loading scripts keep the image's address in data-src until it scrolls into view
  document.querySelectorAll('img[data-src]').forEach(i => add(images, i.getAttribute('data-src')));
  document.querySelectorAll('video[poster]').forEach(v => add(images, v.getAttribute('poster')));
  // the sources of a video or sound: the player took one of them, maybe none
  document.querySelectorAll('video[src], audio[src], video source[src], audio source[src]')
    .forEach(el => add(media, el.getAttribute('src')));
  const urls = [...images].slice(0, limit);
  const one = (u) => new Promise(done => {
    const img = new Image();
    const timer = setTimeout(done, Math.min(waitMs, Math.max(0, stopAt - Date.now())));
    img.onload = img.onerror = () => { clearTimeout(timer); done(); };
    img.src = u;
  });
  for (let i = 0; i < urls.length && Date.now() < stopAt; i += 6) {
    await Promise.all(urls.slice(i, i + 6).map(one));
  }
  return [urls, [...media].slice(0, limit)];
}
"""


@dataclass(frozen=True)
class Autofetched:
    """What :func:`autofetch` found: images it asked for (extras, not the page's own) and
    the sources of the page's videos and sounds, to fetch whole at the end."""

    images: frozenset[str] = frozenset()
    media: tuple[str, ...] = ()


async def autofetch(page: Any, *, deadline: float) -> Autofetched:
    """Load the images of :data:`AUTOFETCH_JS` the page did not load itself and list the
    sources of its videos and sounds. The images are extra: on a slow server they stop at
    ``deadline`` without costing the page its settle time or its fidelity (what loaded by
    then is kept)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0.2:
        return Autofetched()
    budget_ms = int((remaining - 0.2) * 1000)  # the script's own stop, inside the wait
    wait_ms = min(budget_ms, 10_000)
    try:
        images, media = await asyncio.wait_for(
            page.evaluate(AUTOFETCH_JS, [AUTOFETCH_LIMIT, wait_ms, budget_ms]), remaining
        )
    except TimeoutError:
        return Autofetched()
    return Autofetched(frozenset(map(str, images or ())), tuple(map(str, media or ())))


async def settle(seconds: float, *, deadline: float) -> None:
    await asyncio.sleep(max(0.0, min(seconds, deadline - time.monotonic())))
