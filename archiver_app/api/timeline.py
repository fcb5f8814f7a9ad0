"""A replay tab's timeline: the captures of one page, where a route is a page of its own.

A hash-routed app serves every route from one document (``http://h/app/``), so the
captures of ``http://h/app/#/a`` and ``#/b`` share a URL group. They are different pages
to a reader (what each shows differs), so the timeline of a route lists that route's
captures only, and the document's other routes (and the document without a route) are
"other views of this page", each with its own count and newest capture. An anchor
(``#section``) is no route: it is the same page (:func:`~archiver_app.capture.extract.
route_fragment`). Captures known only from records (imports without page rows) have no
fragment, so they belong to the document itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from archiver_app.replay.replayer import Capture
from archiver_app.urls import route_fragment


@dataclass(frozen=True)
class OtherView:
    """Another route of the same document: its newest capture's address, how many captures."""

    url: str
    route: str  # '' for the document itself, else the fragment (``/guide``)
    captures: int


@dataclass(frozen=True)
class Timeline:
    route: str  # the route of the page asked for ('' when none)
    captures: tuple[Capture, ...]  # of this route, oldest first
    other_views: tuple[OtherView, ...]  # the document's other routes, by route


def route_of(url: str) -> str:
    """The route in ``url``'s fragment ('' when it has none or an anchor)."""
    try:
        return route_fragment(urlsplit(url).fragment)
    except ValueError:
        return ""


def route_timeline(captures: list[Capture], url: str) -> Timeline:
    """Split ``captures`` (every capture of ``url``'s group, oldest first) into those of
    ``url``'s route and the other views of the same document."""
    route = route_of(url)
    same: list[Capture] = []
    others: dict[str, list[Capture]] = {}
    for capture in captures:
        theirs = route_of(capture.url)
        if theirs == route:
            same.append(capture)
        else:
            others.setdefault(theirs, []).append(capture)
    views = tuple(
        OtherView(group[-1].url, other, len(group)) for other, group in sorted(others.items())
    )
    return Timeline(route, tuple(same), views)
