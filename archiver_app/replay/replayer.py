"""The replay facade: resolve (url, time) to the nearest capture and serve it.

Resolution order, after pywb and wabac.js:

1. exact: records whose SURT key equals the URL's: those of the address itself (as
   ``http`` or ``https``, with or without ``www.``) nearest in time, else the nearest of
   another address the key folds in (``q=a%2Bb`` for ``q=a+b``, parameters in another
   order). A redirect captured for another spelling of the same key (``http`` ->
   ``https``, ``www.``) is passed over when a non-redirect exists, so a page never
   redirects to itself.
2. fuzzy: same path, and the same query once cache busters, ``utm_*`` and JSONP
   callbacks are dropped from both sides.
3. nearest query: for scripts, styles, images, fonts, media and JSON only, the same path
   with the query most like the requested one.

Within each step, a request made for a page replayed from capture ``capture`` (the
snapshot of the page on screen) takes that capture's own record first, as it was stored
with the page; then the record nearest in time (``at``: that page's time).

Revisit records are followed to the response holding the payload. A record that is a 206
part stands for the whole resource: the parts its capture stored are put back together
when they cover it (see :mod:`~archiver_app.replay.parts`), else the nearest whole capture
of the URL is served (so is a ``200`` cut off that its capture's parts cover: a sound
opened by its address, in older captures); a ``Range`` request is then answered from the
whole body, else from the stored part holding the byte it starts at (416 if none does). Two LRU
caches keep hot lookups and bodies in memory; both are dropped when records are added or
removed (a capture deleted in another process or window), as each lookup sees
(:func:`archiver_app.replay.index.generation`).

Threading contract: a :class:`Replayer` may be shared between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from sqlalchemy import Connection, Engine, text

from archiver_app.replay import fuzzy
from archiver_app.replay import index as idx
from archiver_app.replay.errors import (
    DamagedRecord,
    NotArchived,
    RecordUnavailable,
    RedirectLoop,
)
from archiver_app.replay.lru import LRUCache
from archiver_app.replay.parts import Part, parse_content_range, range_from_parts, stitch
from archiver_app.replay.response import ReplayResponse, apply_range, clean_headers
from archiver_app.validation import safe_join
from archiver_app.warc.reader import StoredRecord, WarcReadError, read_record_at
from archiver_app.warc.records import IndexedRecord
from archiver_app.warc.surt import strip_fragment, url_group, url_key
from archiver_app.warc.timestamps import normalise_ts, parse_ts, to_ts17

MAX_REDIRECTS = 20
FAR_FUTURE = "99991231235959999"


@dataclass(frozen=True)
class Resolution:
    """The record chosen for a request and how it was matched."""

    requested: str
    record: IndexedRecord
    match: str  # "exact" | "fuzzy" | "nearest-query"


@dataclass(frozen=True)
class Capture:
    """One capture of a URL group, for the timeline."""

    ts: str
    url: str
    snapshot_id: int | None
    status: int | None

    @property
    def captured_at(self) -> datetime:
        return parse_ts(self.ts)


def as_ts17(at: datetime | str | None) -> str:
    """Any accepted time (aware datetime, 4-17 digit timestamp, None = newest) as ts17."""
    if at is None:
        return FAR_FUTURE
    if isinstance(at, datetime):
        return to_ts17(at if at.tzinfo else at.replace(tzinfo=UTC))
    return normalise_ts(at.strip())


@lru_cache(maxsize=65536)
def _seconds(ts17: str) -> float:
    """Seconds since the epoch of a ts17 (cheaper than strptime on the hot path)."""
    at = datetime(
        int(ts17[0:4]),
        int(ts17[4:6]),
        int(ts17[6:8]),
        int(ts17[8:10]),
        int(ts17[10:12]),
        int(ts17[12:14]),
        tzinfo=UTC,
    )
    return at.timestamp() + int(ts17[14:17] or 0) / 1000


def _distance(ts_a: str, ts_b: str) -> float:
    if ts_b == FAR_FUTURE:
        return -int(ts_a)  # newest first
    return abs(_seconds(ts_a) - _seconds(ts_b))


class Replayer:
    """Resolve and serve archived responses from a library's records.

    Args:
        engine: the library's database engine.
        root: the library root (record files are relative to it).
    """

    def __init__(
        self,
        engine: Engine,
        root: Path,
        *,
        cache_entries: int = 8192,
        body_cache_bytes: int = 64 << 20,
    ) -> None:
        self.engine = engine
        self.root = root
        # (url, ts14, capture preferred) -> what it resolves to
        self._resolved: LRUCache[tuple[str, str, int | None], Resolution] = LRUCache(cache_entries)
        self._bodies: LRUCache[int, ReplayResponse] = LRUCache(
            cache_entries, max_weight=body_cache_bytes, weigh=lambda r: len(r.body) + 512
        )
        self._files: LRUCache[int, idx.FileLocation] = LRUCache(1024)
        # (url key, second) -> (the capture of a page of that second asked first,)
        self._pages: LRUCache[tuple[str, str], tuple[int | None]] = LRUCache(cache_entries)
        self._library_id_value: str | None = None
        self._generation: tuple[Any, ...] | None = None

    @classmethod
    def for_library(cls, library: object) -> Replayer:
        """A replayer over an open :class:`~archiver_app.library.Library`."""
        from archiver_app.library import Library

        assert isinstance(library, Library)
        return cls(library.engine, library.root)

    # ------------------------------------------------------------------ resolving

    def _check_generation(self, conn: Connection) -> None:
        gen = idx.generation(conn)
        if gen != self._generation:
            self._resolved.clear()
            self._bodies.clear()
            self._files.clear()
            self._pages.clear()
            self._generation = gen

    def resolve(
        self, url: str, at: datetime | str | None = None, *, capture: int | None = None
    ) -> Resolution:
        """The record to replay for ``url`` nearest to ``at``; with ``capture`` (a
        snapshot id), the record that capture stored first.

        Raises:
            NotArchived: nothing matches, even fuzzily.
        """
        with self.engine.connect() as conn:
            return self._resolve_cached(conn, url, at, capture)

    def page_capture(self, url: str, at: str) -> int | None:
        """The capture to answer ``url`` from first when a page captured in the second
        ``at`` (a timestamp of 14 digits or more: the time a replayed page's addresses
        carry) asks for it, as :meth:`serve`'s ``capture``; None when no page was captured
        in that second (or ``at`` names none)."""
        if len(at) < 14 or not at.isdigit():
            return None
        key, second = url_key(strip_fragment(url.strip())), at[:14]
        with self.engine.connect() as conn:
            self._check_generation(conn)
            cached = self._pages.get((key, second))
            if cached is None:
                cached = (idx.capture_in_second(conn, key, parse_ts(second)),)
                self._pages.put((key, second), cached)
        return cached[0]

    def _resolve_cached(
        self, conn: Connection, url: str, at: datetime | str | None, capture: int | None = None
    ) -> Resolution:
        url = strip_fragment(url.strip())
        ts = as_ts17(at)
        self._check_generation(conn)
        cache_key = (url, ts[:14], capture)
        cached = self._resolved.get(cache_key)
        if cached is None:
            cached = self._resolve(conn, url, ts, capture)
            self._resolved.put(cache_key, cached)
        return cached

    def _resolve(self, conn: Connection, url: str, ts: str, capture: int | None) -> Resolution:
        key = url_key(url)
        exact = idx.nearest_exact(conn, key, ts)
        if capture is not None:  # its own record may be further away than the nearest few
            known = {hit.id for hit in exact}
            exact += [h for h in idx.in_capture(conn, key, capture) if h.id not in known]
        if exact:
            if all(hit.url == url for hit in exact):  # the common case: one spelling
                pick = self._pick(exact, url, ts, frozenset((url,)), capture)
                return Resolution(url, pick, "exact")
            spelled = spellings(url)
            if not any(hit.url in spelled for hit in exact):  # maybe further away in time
                exact += idx.nearest_exact(conn, key, ts, per_side=1, urls=spelled)
            return Resolution(url, self._pick(exact, url, ts, spelled, capture), "exact")
        parts = urlsplit(url)
        path_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        candidates = idx.same_path(conn, url_key(path_url))
        if candidates:
            wanted = fuzzy.fuzzy_form(url)
            same = [c for c in candidates if fuzzy.fuzzy_form(c.url) == wanted]
            if same:
                return Resolution(url, self._pick(same, url, ts, capture=capture), "fuzzy")
            subresources = [c for c in candidates if fuzzy.is_subresource(url, c.mime)]
            if subresources:
                best = max(fuzzy.query_similarity(url, c.url) for c in subresources)
                closest = [c for c in subresources if fuzzy.query_similarity(url, c.url) == best]
                pick = self._pick(closest, url, ts, capture=capture)
                return Resolution(url, pick, "nearest-query")
        raise NotArchived(f"{url} is not in the archive", url=url)

    @staticmethod
    def _pick(
        hits: list[IndexedRecord],
        url: str,
        ts: str,
        spelled: frozenset[str] | None = None,
        capture: int | None = None,
    ) -> IndexedRecord:
        spelled = spellings(url) if spelled is None else spelled

        def rank(hit: IndexedRecord) -> tuple[bool, bool, bool, float, bool]:
            # A redirect recorded for another spelling of this key may point back here.
            self_redirect = hit.is_redirect and hit.url != url
            # The key also folds other addresses (q=a+b and q=a%2Bb, a%2Fb and a/b, the
            # order of parameters): the address itself comes first, at any time.
            alien = capture is not None and hit.snapshot_id != capture
            return (
                self_redirect,
                hit.url not in spelled,
                alien,
                _distance(hit.ts, ts),
                hit.url != url,
            )

        return min(hits, key=rank)

    # ------------------------------------------------------------------ serving

    def serve(
        self,
        url: str,
        at: datetime | str | None = None,
        *,
        range_header: str | None = None,
        capture: int | None = None,
    ) -> ReplayResponse:
        """The archived response for ``url`` nearest to ``at``, ready for a browser; with
        ``capture`` (the snapshot of the page it is asked for), that capture's own first.

        Redirects are returned as redirects (``location`` is absolute). JSONP bodies call
        the callback this request named.

        Raises:
            NotArchived: nothing matches.
            RecordUnavailable: the record's WARC file is not in the library (the error
                names the drives holding a copy).
            DamagedRecord: the record is truncated or corrupt.
        """
        with self.engine.connect() as conn:
            resolution = self._resolve_cached(conn, url, at, capture)
            response = self._bodies.get(resolution.record.id)
            if response is None:
                response = self._build(conn, resolution)
                self._bodies.put(resolution.record.id, response)
        response = replace(response, match=resolution.match)
        wanted_cb = fuzzy.jsonp_callback(url)
        if wanted_cb and wanted_cb != fuzzy.jsonp_callback(response.url):
            body = fuzzy.rewrite_jsonp(response.body, wanted_cb)
            response = replace(
                response,
                body=body,
                headers=clean_headers(response.headers, len(body)),
            )
        if response.status == 206 and range_header:  # a part nothing whole stands in for
            return range_from_parts(response, self._parts(resolution), range_header)
        return apply_range(response, range_header)

    def _parts(self, resolution: Resolution) -> list[ReplayResponse]:
        """Every readable stored part of the capture ``resolution``'s part belongs to, as
        stored (cached under the record's id negated: its own id caches what replaces it)."""
        out = []
        with self.engine.connect() as conn:
            for hit in idx.parts_of(conn, resolution.record):
                stored = self._bodies.get(-hit.id)
                if stored is None:
                    try:
                        stored = self._response_of(conn, hit, resolution.requested)
                    except (DamagedRecord, RecordUnavailable):
                        continue
                    self._bodies.put(-hit.id, stored)
                out.append(stored)
        return out

    def _build(self, conn: Connection, resolution: Resolution) -> ReplayResponse:
        response = self._response_of(conn, resolution.record, resolution.requested)
        if response.status == 206:
            return self._whole_for_part(conn, resolution.record, resolution.requested, response)
        if response.status == 200 and response.truncated:  # a player may have read it whole
            whole = self._stitched(conn, resolution.record, resolution.requested)
            if whole is not None and len(whole) > len(response.body):
                headers = clean_headers(response.headers, len(whole))
                return replace(response, body=whole, headers=headers, truncated=None)
        return response

    def _whole_for_part(
        self, conn: Connection, part_hit: IndexedRecord, requested: str, part: ReplayResponse
    ) -> ReplayResponse:
        """The whole resource in place of the stored 206 ``part``: put back together from
        the parts its capture stored when they cover it, else the nearest whole capture
        of the URL, else the part itself (a 206 with its ``Content-Range``)."""
        whole = self._stitched(conn, part_hit, requested, part)
        if whole is not None:
            headers = clean_headers(part.headers, len(whole))
            return replace(part, status=200, body=whole, headers=headers)
        full = idx.nearest_whole(conn, part_hit)
        if full is not None:
            return self._response_of(conn, full, requested)
        return part

    def _stitched(
        self, conn: Connection, hit: IndexedRecord, url: str, part: ReplayResponse | None = None
    ) -> bytes | None:
        """The whole body of ``hit``'s URL put back together from the 206 parts its capture
        stored (``part``: ``hit`` itself, read already), or None when they do not cover it."""
        pieces = []
        for held in idx.parts_of(conn, hit):
            try:
                stored = part if part and held.id == hit.id else self._response_of(conn, held, url)
            except (DamagedRecord, RecordUnavailable):
                continue  # a part that cannot be read leaves a gap, or not
            span = parse_content_range(stored.header("Content-Range"))
            if span is not None:
                pieces.append(Part(*span, body=stored.body))
        return stitch(pieces)

    def main_response(self, snapshot_id: int) -> ReplayResponse | None:
        """A snapshot's main response as stored, read wherever a copy is (in the library,
        at its linked place, on a mounted drive); a revisit's payload from its original.
        None when it has none or no copy can be read."""
        with self.engine.connect() as conn:
            hit = idx.main_record(conn, snapshot_id)
            if hit is None:
                return None
            try:
                return self._response_of(conn, hit, hit.url)
            except (DamagedRecord, RecordUnavailable):
                return None

    def kept_view(self, snapshot_id: int, view: str) -> bytes | None:
        """The payload of the ``urn:<view>:`` record (``text``: the page text) a capture
        kept in its WARC, read wherever a copy is; None when it has none or none is readable."""
        with self.engine.connect() as conn:
            hit = idx.view_record(conn, snapshot_id, view)
            if hit is None:
                return None
            try:
                return self._response_of(conn, hit, hit.url).body
            except (DamagedRecord, RecordUnavailable):
                return None

    def _response_of(self, conn: Connection, hit: IndexedRecord, requested: str) -> ReplayResponse:
        """The stored response of ``hit`` (a revisit's payload from its original)."""
        stored = self._read(conn, hit, requested)
        payload_hit, payload_stored = hit, stored
        if hit.record_type == "revisit":
            original = idx.original_of(conn, hit, stored.warc_header("WARC-Refers-To-Target-URI"))
            if original is None:
                raise DamagedRecord(
                    f"the capture of {hit.url} at {hit.ts[:14]} is a revisit whose original "
                    "payload is not in the archive",
                    url=requested,
                )
            payload_hit, payload_stored = original, self._read(conn, original, hit.url)
        status = stored.http_status or payload_stored.http_status or 200
        headers = stored.http_headers or payload_stored.http_headers
        if hit.record_type == "resource" or not headers:
            mime = hit.mime or payload_hit.mime or "application/octet-stream"
            headers = [("Content-Type", mime)]
        body = payload_stored.payload
        stored_range = next((v for k, v in headers if k.lower() == "content-range"), None)
        headers = clean_headers(headers, len(body))
        if status == 206 and stored_range:  # a part says which part it is
            headers.append(("Content-Range", stored_range))
        if 300 <= status < 400:
            location = next((v for k, v in headers if k.lower() == "location"), None)
            if location:
                absolute = urljoin(hit.url, location.strip())
                headers = [(k, absolute if k.lower() == "location" else v) for k, v in headers]
        return ReplayResponse(
            status=status,
            headers=headers,
            body=body,
            url=hit.url,
            ts=hit.ts,
            record_id=hit.id,
            snapshot_id=hit.snapshot_id if hit.snapshot_id is not None else payload_hit.snapshot_id,
            truncated=stored.warc_header("WARC-Truncated")
            or payload_stored.warc_header("WARC-Truncated"),
        )

    def locate(self, conn: Connection, hit: IndexedRecord, url: str) -> Path:
        """The readable path of ``hit``'s file: in the library, at its linked place, or
        on a mounted drive holding a present copy.

        Raises:
            RecordUnavailable: no readable copy is reachable; the error names the drives.
        """
        cached = self._files.get(hit.file_id)
        if cached is not None:
            found = self._first_readable(conn, cached)
            if found is not None:
                return found
        loc = idx.file_location(conn, hit.file_id)  # fresh: drives come and go
        if loc is None:
            raise DamagedRecord(
                f"the index names a file that is not registered ({hit.file_id})", url=url
            )
        self._files.put(hit.file_id, loc)
        found = self._first_readable(conn, loc)
        if found is not None:
            return found
        labels = [label for label, _ in loc.drives]
        where = (
            f"it is on the drive {_join_labels(labels)}: connect it to replay this page"
            if labels
            else "no drive holds a copy"
        )
        raise RecordUnavailable(
            f"the archive file {loc.path} is not on this computer; {where}",
            url=url,
            path=loc.path,
            drives=labels,
        )

    def _first_readable(self, conn: Connection, loc: idx.FileLocation) -> Path | None:
        if loc.external_path and Path(loc.external_path).is_file():
            return Path(loc.external_path)
        local = safe_join(self.root, loc.path)
        if local.is_file():
            return local
        library_id = self._library_id(conn)
        for _label, mount in loc.drives:
            if mount and library_id:
                on_drive = safe_join(Path(mount) / "Archiver" / library_id, loc.path)
                if on_drive.is_file():
                    return on_drive
        return None

    def invalidate(self) -> None:
        """Forget every cached lookup and body (e.g. after files were moved)."""
        self._resolved.clear()
        self._bodies.clear()
        self._files.clear()
        self._pages.clear()

    def _library_id(self, conn: Connection) -> str | None:
        if self._library_id_value is None:
            self._library_id_value = self._read_library_id(conn)
        return self._library_id_value

    def _read_library_id(self, conn: Connection) -> str | None:
        value = conn.execute(text("SELECT value FROM settings WHERE key = 'library'")).scalar()
        if isinstance(value, str):
            import json

            value = json.loads(value)
        return str(value.get("library_id")) if isinstance(value, dict) else None

    def _read(self, conn: Connection, hit: IndexedRecord, url: str) -> StoredRecord:
        path = self.locate(conn, hit, url)
        if path.stat().st_size < hit.offset + hit.length:
            raise DamagedRecord(
                f"the capture of {hit.url} is truncated: {path.name} ends before the record "
                f"does (offset {hit.offset}, length {hit.length})",
                url=url,
            )
        try:
            return read_record_at(path, hit.offset, hit.length, decode=True)
        except WarcReadError as exc:
            raise DamagedRecord(f"the capture of {hit.url} cannot be read: {exc}", url=url) from exc

    # ------------------------------------------------------------------ redirects, timeline

    def redirect_chain(self, url: str, at: datetime | str | None = None) -> list[str]:
        """The URLs an archived page redirects through, starting with ``url``.

        Stops at the first non-redirect or unarchived URL.

        Raises:
            RedirectLoop: the chain comes back to a URL already visited, or exceeds
                :data:`MAX_REDIRECTS` hops.
        """
        chain = [strip_fragment(url)]
        seen = {url_key(chain[0]) + "|" + chain[0]}
        while True:
            try:
                response = self.serve(chain[-1], at)
            except NotArchived:
                return chain
            target = response.location
            if not target:
                return chain
            target = strip_fragment(target)
            marker = url_key(target) + "|" + target
            chain.append(target)
            if marker in seen or len(chain) > MAX_REDIRECTS:
                raise RedirectLoop(
                    "this archived page redirects in a loop: " + " → ".join(chain),
                    url=url,
                    chain=chain,
                )
            seen.add(marker)

    def captures_of(self, url: str) -> list[Capture]:
        """Every capture of ``url``'s group, oldest first (snapshots, else records)."""
        group = url_group(url)
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT captured_at, url, id, http_status FROM snapshots WHERE url_group = :g"
                    " AND state = 'complete' ORDER BY captured_at, id"
                ),
                {"g": group},
            ).all()
            if rows:
                return [Capture(_ts_of(r[0]), r[1], r[2], r[3]) for r in rows]
            hits = conn.execute(
                text(
                    "SELECT ts, url, snapshot_id, status FROM records WHERE url_key = :k"
                    " AND record_type IN ('response', 'revisit') ORDER BY ts, id"
                ),
                {"k": group},
            ).all()
        return [Capture(r[0], r[1], r[2], r[3]) for r in hits]


def spellings(url: str) -> frozenset[str]:
    """``url`` as the same page may have been captured: ``http`` or ``https``, with or
    without ``www.``; its path and query exactly as they are."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return frozenset({url})
    host = parts.netloc.rpartition("@")[2].lower()
    bare = host.removeprefix("www.")
    rest = urlunsplit(("", "", parts.path, parts.query, ""))
    return frozenset(
        {url}
        | {
            f"{scheme}://{name}{rest}"
            for scheme in ("http", "https")
            for name in (bare, "www." + bare)
        }
    )


def _ts_of(value: object) -> str:
    if isinstance(value, datetime):
        return to_ts17(value if value.tzinfo else value.replace(tzinfo=UTC))
    text_value = str(value)
    at = datetime.fromisoformat(text_value)
    return to_ts17(at if at.tzinfo else at.replace(tzinfo=UTC))


def _join_labels(labels: list[str]) -> str:
    quoted = [f"“{label}”" for label in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def resolve(library: object, url: str, at_time: datetime | str | None = None) -> Resolution:
    """Resolve ``url`` at ``at_time`` in ``library`` (one-off; keep a Replayer for many)."""
    return Replayer.for_library(library).resolve(url, at_time)
