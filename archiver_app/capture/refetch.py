"""Fetching a response again in the page's name (its browser context's cookies, by the app's
own client: :mod:`.direct_fetch`), for what the recorder could not read back from the browser.

- :func:`refetch_in`: a body the browser no longer holds (a PDF its viewer took over, an
  evicted buffer), accepted only with the status the browser saw and within the byte limit;
- :func:`stand_in_from`: a whole response no recorded session reported (a worker's own
  script; what a worker asked for before its session was recorded), written by
  :func:`record_missed`, and the whole of media the browser fetched in parts
  (:func:`record_whole_media`: a video or sound read a range at a time, or cut off once
  the player had enough, replays whole only from a whole copy), and of the sources of a
  ``<video>`` or ``<audio>`` the player did not load at all; first, a sound or video
  opened as the page itself (:mod:`.media_document`).

Each fetch is noted in the snapshot's provenance by the recorder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

from archiver_app.capture import direct_fetch
from archiver_app.capture.direct_fetch import OverLimit, browser_cookies
from archiver_app.capture.extract import first_line
from archiver_app.capture.media_document import record_media_document
from archiver_app.capture.recorder import NetworkRecorder, Refetch, StandIn
from archiver_app.capture.results import ResourceOutcome
from archiver_app.warc.httpmsg import HttpResponse
from archiver_app.warc.surt import strip_fragment

#: Request headers a fetch again carries as the browser sent them (with the context's
#: cookies): what the server may answer differently by.
KEPT_HEADERS = frozenset({"range", "accept", "user-agent", "accept-language", "referer"})


def refetch_in(context: Any, remaining_ms: Callable[[], float]) -> Refetch:
    """The recorder's :data:`Refetch`: the same request again in the page's name (its
    context's cookies), accepted only with the status the browser saw (an expired link's
    403 page is not the document) and within the byte limit. The app's own client reads
    it (:mod:`.direct_fetch`): a large body never goes through Playwright's driver."""

    async def refetch(url: str, headers: dict[str, str], status: int, limit: int) -> bytes | str:
        keep = {k: v for k, v in headers.items() if k.lower() in KEPT_HEADERS}
        got = await _fetch_again(context, url, keep, limit, remaining_ms)
        if isinstance(got, str):
            return got
        if got[0].status != status:
            return f"the server answered {got[0].status}, not {status}"
        return got[1]

    return refetch


def stand_in_from(
    context: Any, remaining_ms: Callable[[], float], recorder: NetworkRecorder
) -> StandIn:
    """The recorder's :data:`StandIn`: the URL fetched again in the page's name, with the
    user agent the browser sent (the first one ``recorder`` saw), by the app's own client."""

    async def stand_in(url: str, limit: int) -> tuple[HttpResponse, bytes] | str:
        agent = next(_user_agents(recorder), None)
        headers = {"User-Agent": agent} if agent else {}
        return await _fetch_again(context, url, headers, limit, remaining_ms)

    return stand_in


def _user_agents(recorder: NetworkRecorder) -> Iterator[str]:
    for ex in recorder.exchanges.values():
        for hop in ex.hops:
            agent = next((v for k, v in hop.headers.items() if k.lower() == "user-agent"), "")
            if agent:
                yield agent


async def _fetch_again(
    context: Any,
    url: str,
    headers: dict[str, str],
    limit: int,
    remaining_ms: Callable[[], float],
) -> tuple[HttpResponse, bytes] | str:
    """``url`` fetched with ``headers`` and the context's cookies: the response and its
    body, or why not (a network error, a body over ``limit``)."""
    cookie = await browser_cookies(context, url)
    if cookie:
        headers = {**headers, "Cookie": cookie}
    try:
        response, body = await direct_fetch.fetch(
            url, headers, limit, min(10_000, remaining_ms()) / 1000
        )
    except Exception as exc:
        return first_line(exc) or type(exc).__name__
    if isinstance(body, OverLimit):
        return str(body)
    return response, body


async def record_missed(
    recorder: NetworkRecorder, requested: Iterable[str], scripts: Iterable[str], stand_in: StandIn
) -> None:
    """Write a stand-in response for each URL in ``requested`` (what the browser reported
    the page asked for) that no session the recorder listens on reported, and for each
    worker script in ``scripts`` whose response none reported; each gets a note."""
    if recorder.writer is None:
        return  # a routed recorder (one file per page) has no file for stand-ins
    exchanges = recorder.exchanges.values()
    seen = {hop.url for ex in exchanges for hop in ex.hops}
    answered = {hop.url for ex in exchanges for hop in ex.hops if hop.response}
    # a request never carries a fragment (Playwright may report a document's)
    missed = [u for u in dict.fromkeys(map(strip_fragment, requested)) if u not in seen]
    missed += [u for u in dict.fromkeys(scripts) if u not in answered and u not in missed]
    for url in missed:
        if recorder.closed or not url.startswith(("http://", "https://")):
            continue
        got = await stand_in(url, recorder.max_body)
        if isinstance(got, str):
            recorder.notes.append(f"{url}: requested but not recorded ({got})")
            continue
        for ex in exchanges:  # the request went out; its answer is this
            if ex.hops and ex.hops[-1].url == url and ex.hops[-1].response is None:
                ex.written = True
        if not await recorder.write_stand_in(url, *got):
            return
        recorder.notes.append(f"{url}: fetched again (its response reached no recorded session)")
    await _record_blocked(recorder, stand_in)


#: What the browser says of an answer it kept from the page after it arrived (Opaque
#: Response Blocking: JSON or HTML asked for as an image or script from another site;
#: Cross-Origin-Resource-Policy): the server answered, DevTools reports no response.
BLOCKED_BY_BROWSER = frozenset({"net::ERR_BLOCKED_BY_ORB", "net::ERR_BLOCKED_BY_RESPONSE"})


async def _record_blocked(recorder: NetworkRecorder, stand_in: StandIn) -> None:
    """Write what the server answered to each request the browser blocked from the page:
    the archive keeps the answer (a replay browser blocks it the same way), and the
    capture is not marked as missing a resource the page never had."""
    blocked = [
        r
        for r in recorder.resources
        if r.outcome is ResourceOutcome.NO_RESPONSE and r.error in BLOCKED_BY_BROWSER
    ]
    for url in dict.fromkeys(r.url for r in blocked):
        if recorder.closed:
            return
        got = await stand_in(url, recorder.max_body)
        if isinstance(got, str):
            recorder.notes.append(f"{url}: blocked by the browser; not fetched again ({got})")
            continue
        if not await recorder.write_stand_in(url, *got):  # the blocked entry goes at finish
            return
        recorder.notes.append(f"{url}: the browser kept it from the page; its answer is kept")


async def record_whole_media(
    recorder: NetworkRecorder, stand_in: StandIn, sources: Iterable[str] = ()
) -> None:
    """Fetch whole (no ``Range``) each video or sound the page was answered in parts
    (``206``) and write it as a ``200``: the player reads a range at a time and lets go
    once it has enough, so the parts rarely cover the file. Replay answers a range from
    the whole copy. Each within the byte limit; a failure is a note and the parts stay.

    Then each of ``sources`` (those of the page's ``<video>`` and ``<audio>``, listed by
    :func:`.behaviours.autofetch`) that nothing answered: another format, which a replay
    browser may pick, or one the player did not preload; redirects followed, each hop
    written. They are extras: together within one byte limit, a failure only a note.

    First, a sound or video opened as the page itself gets its page record whole
    (:func:`.media_document.record_media_document`)."""
    await record_media_document(recorder)
    if recorder.writer is None:
        return
    whole, parts, answered = set(), {}, set[str]()
    for ex in recorder.exchanges.values():
        answered.update(hop.url for hop in ex.hops if hop.response)  # redirects too
        answer = ex.hops[-1].response if ex.hops else None
        status = int(answer.get("status") or 0) if answer else 0
        if status == 200:
            whole.add(ex.hops[-1].url)
        elif status == 206 and ex.resource_type == "Media":
            parts[ex.hops[-1].url] = True
    for url in (u for u in parts if u not in whole):
        if recorder.closed:
            return
        got = await stand_in(url, recorder.max_body)
        if isinstance(got, tuple) and got[0].status != 200:
            got = f"the server answered {got[0].status}"
        if isinstance(got, str):
            recorder.notes.append(f"{url}: fetched in parts; the whole file was not ({got})")
            continue
        parts_of = [r for r in recorder.resources if r.url == url and r.status == 206]
        if not await recorder.write_stand_in(url, *got):
            return
        recorder.resources[:] = [r for r in recorder.resources if r not in parts_of]
        recorder.notes.append(f"{url}: fetched in parts by the player, and whole")
    unseen = [u for u in dict.fromkeys(map(strip_fragment, sources)) if u not in answered]
    await _record_sources(recorder, stand_in, unseen)


#: Redirects followed from a source of a video or sound nobody fetched (a CDN's).
MEDIA_REDIRECTS = 5


async def _record_sources(recorder: NetworkRecorder, stand_in: StandIn, urls: list[str]) -> None:
    """Fetch and write each of ``urls``, all of them within one byte limit."""
    budget = recorder.max_body
    for url in urls:
        if recorder.closed:
            return
        if budget <= 0:
            recorder.notes.append(
                f"{url}: a source of a video or sound; not fetched (over the "
                f"{recorder.max_body} byte limit for such sources)"
            )
            continue
        got = await _follow(recorder, url, stand_in, budget)
        if isinstance(got, tuple) and got[0].status != 200:
            got = f"the server answered {got[0].status}"
        if isinstance(got, str):
            recorder.notes.append(f"{url}: a source of a video or sound; not fetched ({got})")
            continue
        if not await recorder.write_stand_in(got[2], got[0], got[1]):
            return
        budget -= len(got[1])
        recorder.notes.append(f"{url}: a source of a video or sound, fetched whole")


async def _follow(
    recorder: NetworkRecorder, url: str, stand_in: StandIn, limit: int
) -> tuple[HttpResponse, bytes, str] | str:
    """``url`` fetched, through up to :data:`MEDIA_REDIRECTS` redirects (each written as
    it answered): the last response, its body and address; or why not."""
    for hop in range(MEDIA_REDIRECTS + 1):
        got = await stand_in(url, limit)
        if isinstance(got, str):
            return got
        location = got[0].header("location")
        if hop == MEDIA_REDIRECTS or not (300 <= got[0].status < 400 and location):
            return got[0], got[1], url
        target = strip_fragment(urljoin(url, location))
        if not target.startswith(("http://", "https://")):
            return f"redirected to {location}"
        if not await recorder.write_stand_in(url, *got):
            return "the capture ended"
        url = target
    raise AssertionError("unreachable: the last hop returns")
