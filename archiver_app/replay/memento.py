"""Memento (RFC 7089): TimeGates, TimeMaps and the headers that tie captures together.

Plain functions over a list of :class:`Memento` (one capture of an original URL), so the
HTTP server only maps its paths onto them:

- a **TimeGate** answers ``Accept-Datetime`` with the capture nearest in time (section 4.1:
  the latest when no date is asked, ties to the earlier one) and ``Vary: accept-datetime``;
- a **TimeMap** lists every capture in ``application/link-format`` (section 5), with the
  ``first``/``last`` relations and each capture's ``datetime``;
- a **Memento** carries ``Memento-Datetime`` and a ``Link`` header naming the original, the
  TimeGate, the TimeMap and its neighbours in time (section 2.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from archiver_app.errors import InputError

LINK_FORMAT = "application/link-format"


@dataclass(frozen=True)
class Memento:
    """One capture: its time and the URL the archive serves it at."""

    at: datetime  # aware, UTC
    url: str


def http_date(at: datetime) -> str:
    """RFC 1123 date in GMT, as Memento headers carry it."""
    return format_datetime(at.astimezone(UTC), usegmt=True)


def parse_accept_datetime(value: str) -> datetime:
    """An ``Accept-Datetime`` value (RFC 1123); anything else is refused (HTTP 400)."""
    try:
        at = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError) as exc:
        raise InputError(f"Accept-Datetime is not an RFC 1123 date: {value!r}") from exc
    if at is None:
        raise InputError(f"Accept-Datetime is not an RFC 1123 date: {value!r}")
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def choose(mementos: Sequence[Memento], wanted: datetime | None) -> Memento:
    """The capture a TimeGate redirects to: nearest to ``wanted``, else the latest."""
    if not mementos:
        raise LookupError("no memento")
    ordered = sorted(mementos, key=lambda m: m.at)
    if wanted is None:
        return ordered[-1]
    return min(ordered, key=lambda m: abs((m.at - wanted).total_seconds()))


def _relations(ordered: Sequence[Memento], m: Memento, current: Memento | None = None) -> str:
    """``first``, ``last``, ``prev``, ``next`` as they apply, then ``memento``."""
    rels = []
    if m == ordered[0]:
        rels.append("first")
    if m == ordered[-1]:
        rels.append("last")
    if current is not None and current in ordered:
        step = ordered.index(m) - ordered.index(current)
        rels += ["prev"] if step == -1 else ["next"] if step == 1 else []
    return " ".join([*rels, "memento"])


def link_header(
    original: str,
    timegate: str,
    timemap: str,
    mementos: Sequence[Memento],
    current: Memento | None = None,
) -> str:
    """The ``Link`` header of a TimeGate (no ``current``) or of a Memento (``current``).

    It names the first and last captures and, for a memento, its previous and next ones,
    as the RFC's examples do.
    """
    ordered = sorted(mementos, key=lambda m: m.at)
    parts = [f'<{original}>; rel="original"']
    span = ""
    if ordered:
        span = f'; from="{http_date(ordered[0].at)}"; until="{http_date(ordered[-1].at)}"'
    parts.append(f'<{timemap}>; rel="timemap"; type="{LINK_FORMAT}"{span}')
    parts.append(f'<{timegate}>; rel="timegate"')
    wanted = {0, len(ordered) - 1} if ordered else set()
    if current is not None and current in ordered:
        i = ordered.index(current)
        wanted |= {j for j in (i - 1, i + 1) if 0 <= j < len(ordered)}
    for j in sorted(wanted):
        m = ordered[j]
        rel = _relations(ordered, m, current)
        parts.append(f'<{m.url}>; rel="{rel}"; datetime="{http_date(m.at)}"')
    return ", ".join(parts)


def timemap(
    original: str,
    timegate: str,
    self_url: str,
    mementos: Sequence[Memento],
) -> str:
    """The TimeMap of ``original`` in ``application/link-format`` (one link per line)."""
    ordered = sorted(mementos, key=lambda m: m.at)
    lines = [f'<{original}>; rel="original"']
    span = ""
    if ordered:
        span = f'; from="{http_date(ordered[0].at)}"; until="{http_date(ordered[-1].at)}"'
    lines.append(f'<{self_url}>; rel="self"; type="{LINK_FORMAT}"{span}')
    lines.append(f'<{timegate}>; rel="timegate"')
    for m in ordered:
        lines.append(f'<{m.url}>; rel="{_relations(ordered, m)}"; datetime="{http_date(m.at)}"')
    return ",\n".join(lines) + "\n"


def timegate_headers(
    original: str,
    timegate: str,
    timemap_url: str,
    mementos: Sequence[Memento],
    accept_datetime: str | None,
) -> tuple[Memento, list[tuple[str, str]]]:
    """The capture a TimeGate redirects to and the headers of its 302 answer."""
    wanted = parse_accept_datetime(accept_datetime) if accept_datetime else None
    chosen = choose(mementos, wanted)
    return chosen, [
        ("Location", chosen.url),
        ("Vary", "accept-datetime"),
        ("Link", link_header(original, timegate, timemap_url, mementos)),
    ]


def memento_headers(
    original: str,
    timegate: str,
    timemap_url: str,
    mementos: Sequence[Memento],
    current: Memento,
) -> list[tuple[str, str]]:
    """``Memento-Datetime`` and ``Link`` for a served capture."""
    return [
        ("Memento-Datetime", http_date(current.at)),
        ("Link", link_header(original, timegate, timemap_url, mementos, current)),
    ]
