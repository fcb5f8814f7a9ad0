"""An export's pages list (``pages.jsonl``): one JSON line per page.

Each line gives what every tool reads (``id``, ``url``, ``ts``, ``title``, ``text``) and
Archiver's own fields, which ReplayWeb.page and pywb ignore (ReplayWeb.page keeps a page's
fields as they are) and ``archiver import`` gives back
(:mod:`archiver_app.importers.labels`): the page's ``tags`` (a list of names), ``notes``,
``collection`` (the slug of its collection) and ``urn``, the identifier citations give the
capture (``urn:archiver:<library id>:<uid>``), which the id alone cannot say: an import
into another library keeps it, so a citation made before the export still finds the page.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from archiver_app.capture_ref import cited_urn
from archiver_app.export.plan import ExportPlan
from archiver_app.library import Library

if TYPE_CHECKING:
    from archiver_app.export.writer import ExportResult

#: What an export carries besides the archive, and what not, as its output says.
CARRIED = (
    "each page's tags, notes, collection and the identifier its citations give go in "
    "pages.jsonl (archiver import gives them back); not carried: watches and the changes "
    "they found, editions, collections' display names (only their slugs), and how each "
    "page was captured (its browser and fidelity: an import marks its pages 'imported')"
)


def pages_jsonl(library: Library, plan: ExportPlan, result: ExportResult) -> bytes:
    """The pages list: each page's id, url, time, title and text (what every tool reads),
    and Archiver's own fields, which other tools ignore and ``archiver import`` gives back
    (:mod:`archiver_app.importers.labels`): its ``tags``, ``notes``, ``collection`` (slug)
    and ``urn``."""
    header = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages", "hasText": True}
    out = [json.dumps(header)]
    ids = plan.snapshot_ids
    with library.engine.connect() as conn:
        for i in range(0, len(ids), 500):
            marks = ",".join(str(int(x)) for x in ids[i : i + 500])
            sql = (
                "SELECT s.id, s.uid, s.url, s.captured_at, s.title, f.body, s.notes, c.slug, "  # noqa: S608
                "s.provenance "
                "FROM snapshots s JOIN collections c ON c.id = s.collection_id "
                f"LEFT JOIN snapshot_fts f ON f.rowid = s.id WHERE s.id IN ({marks}) "
                "ORDER BY s.captured_at, s.id"
            )
            tags = _tags_of(conn, marks)
            for sid, uid, url, at, title, body, notes, slug, prov in conn.execute(text(sql)):
                page = {"id": uid, "url": url, "ts": _listed_time(at, plan.page_times.get(sid))}
                if title:
                    page["title"] = title
                if body:
                    page["text"] = " ".join(str(body).split())
                if sid in tags:
                    page["tags"] = tags[sid]
                if notes:
                    page["notes"] = notes
                page["collection"] = slug
                page["urn"] = cited_urn(library.id, uid, _json(prov))
                out.append(json.dumps(page, ensure_ascii=False))
                result.pages += 1
    return ("\n".join(out) + "\n").encode("utf-8")


def _json(value: object) -> object:
    """A JSON column as a raw query gives it: text on SQLite, decoded on PostgreSQL."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _tags_of(conn: Connection, marks: str) -> dict[int, list[str]]:
    """The tag names of the snapshots ``marks`` (ids, comma separated), by snapshot."""
    sql = (
        "SELECT st.snapshot_id, t.name FROM snapshot_tags st JOIN tags t ON t.id = st.tag_id "  # noqa: S608
        f"WHERE st.snapshot_id IN ({marks}) ORDER BY st.snapshot_id, t.name"
    )
    out: dict[int, list[str]] = {}
    for sid, name in conn.execute(text(sql)):
        out.setdefault(int(sid), []).append(str(name))
    return out


def _listed_time(captured_at: object, record_ts: str | None) -> str:
    """A page's time in the pages list: when it was captured, to the second; for a page
    that loaded itself again or a hash route, its own record's time to the millisecond
    (``record_ts``, ts17), which an importer matches to that record rather than the answer
    it replaced or another route's."""
    if record_ts is not None and len(record_ts) == 17:
        r = record_ts
        return f"{r[:4]}-{r[4:6]}-{r[6:8]}T{r[8:10]}:{r[10:12]}:{r[12:14]}.{r[14:]}Z"
    at = captured_at
    when = at if isinstance(at, datetime) else datetime.fromisoformat(str(at))
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
