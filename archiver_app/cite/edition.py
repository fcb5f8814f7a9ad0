"""Cite an edition: ``archiver cite NAME`` for a collection's reviewed release.

An edition is cited as a data set: its name, the collection and period it covers, its state
(accepted on a date, or not accepted), and, once it has been released with ``archiver
edition export``, the date of its last release and the SHA-256 of that release's WACZ (as
written, or as ``archiver export timestamp-pending`` rewrote it to add its timestamp), so a
reader can tell the file cited from any other. Only a release of what the
edition is now is cited (:func:`last_release`): never a draft of an accepted edition. Its
identifier is ``urn:archiver:<library id>:edition:<name>``.

The formats are those of a capture that make sense for a data set: BibTeX (``@dataset``),
CSL-JSON, RIS (``TY  - DATA``) and the formatted styles, through the same citeproc-py path
as captures (:func:`archiver_app.cite.formats.format_items`). A Robust Link needs a web
address, which an edition has not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from archiver_app.capture_ref import edition_urn
from archiver_app.cite.formats import (
    _bib_escape,
    _bib_url,
    _one_line,
    date_in_words,
    format_items,
)
from archiver_app.editions.states import EditionState
from archiver_app.errors import InputError
from archiver_app.library import Library


@dataclass(frozen=True)
class EditionReference:
    """What a citation of one edition says."""

    key: str
    name: str
    collection: str  # the collection's name
    period: str  # "2026", or "2026-03-01 to 2026-05-31"
    state: str  # EditionState value
    accepted_at: datetime | None
    archive_id: str  # urn:archiver:<library id>:edition:<name>
    released_at: datetime | None = None  # the last release
    release_state: str | None = None  # the edition's state then
    wacz: str | None = None  # the last release's file name
    sha256: str | None = None  # of that WACZ as written (or timestamped later)

    @property
    def title(self) -> str:
        return f"{self.name}: edition of the collection {self.collection}, {self.period}"

    @property
    def accepted(self) -> bool:
        return self.state == EditionState.RESEARCH_READY and self.accepted_at is not None

    @property
    def unreleased(self) -> bool:
        """Accepted, and no release of its accepted members is on record (see
        :func:`last_release`): nothing to cite by its SHA-256 yet."""
        return self.accepted and self.sha256 is None

    @property
    def status(self) -> str:
        """'accepted 2026-11-20', or 'search_ready, not accepted'."""
        if self.accepted and self.accepted_at is not None:
            return f"accepted {self.accepted_at:%Y-%m-%d}"
        return f"{self.state.replace('_', ' ')}, not accepted"

    @property
    def release(self) -> str:
        """'WACZ NAME.wacz, SHA-256 HEX' (and a draft's state), or '' before any release."""
        if self.sha256 is None:
            return ""
        draft = "" if self.release_state == "research_ready" else f" ({self.release_state} draft)"
        return f"WACZ {self.wacz}{draft}, SHA-256 {self.sha256}"

    @property
    def issued(self) -> datetime | None:
        """The last release's date, else the acceptance's (None: neither)."""
        if self.released_at is not None:
            return self.released_at
        return self.accepted_at if self.state == "research_ready" else None

    @property
    def note(self) -> str:
        parts = [f"Period {self.period}", self.status.capitalize()]
        if self.released_at is not None:
            parts.append(f"released {self.released_at:%Y-%m-%d}, {self.release}")
        return "; ".join(parts)


def edition_citation(lib: Library, name: str) -> EditionReference:
    """The citation record of edition ``name`` (InputError: no such edition)."""
    ed = lib.editions.get(name)
    release = last_release(lib, name)
    return EditionReference(
        key="edition_" + (re.sub(r"[^a-z0-9]+", "", name.lower()) or "x"),
        name=ed.name,
        collection=ed.collection_name or ed.collection,
        period=ed.period_label,
        state=ed.state.value,
        accepted_at=_utc(ed.accepted_at),
        archive_id=edition_urn(lib.id, ed.name),
        **release,
    )


def last_release(lib: Library, name: str) -> dict[str, Any]:
    """The last completed release of edition ``name`` that is a release of the edition as
    it is now (:func:`archiver_app.editions.recorded.of_now`): ``released_at``,
    ``release_state``, ``wacz`` and ``sha256`` (empty: none)."""
    from archiver_app.editions.recorded import cited_release

    release = cited_release(lib, name)
    if release is None:
        return {}
    return {
        "released_at": release.released_at,
        "release_state": release.state,
        "wacz": release.file_name,
        "sha256": release.sha256,
    }


def _utc(at: datetime | None) -> datetime | None:
    if at is None:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def render_editions(refs: Sequence[EditionReference], form: str) -> str:
    """One of bibtex, csl-json, ris, or a style name."""
    if form == "bibtex":
        return "\n".join(_bibtex(r) for r in refs)
    if form == "csl-json":
        return json.dumps([_csl(r) for r in refs], indent=2, ensure_ascii=False) + "\n"
    if form == "ris":
        return "\r\n".join(_ris(r) for r in refs) + "\r\n"
    if form == "robust-link":
        raise InputError("an edition has no web address to link: cite it as bibtex, "
                         "csl-json, ris or in a style (apa, chicago, mla)")  # fmt: skip
    items = []
    for r in refs:
        item = _csl(r)
        item.pop("note")
        item["title"] = _title_as_typed(r)
        # the dates in words where the state is said; the year alone where a style dates
        # the entry (Chicago gave "…, accepted 2026-11-29. November 29.")
        item["genre"] = _kind_in_words(r, form)
        if r.issued is not None:
            item["issued"] = {"date-parts": [[r.issued.year]]}
        # the release's digest where every style prints it; an identifier, not a sentence
        item["archive_location"] = f'<span class="nocase">{_where(r)}</span>'
        items.append(item)
    entries = format_items(items, form).splitlines()
    return "".join(_with_identifier(e, r) + "\n" for e, r in zip(entries, refs, strict=True))


def _kind_in_words(r: EditionReference, style: str) -> str:
    """'Web archive edition, accepted November 29, 2026', with its release's date when it
    was released ('…, released December 1, 2026', or 'accepted and released' the same day),
    and the state of one not accepted; the dates as ``style``'s locale writes them."""
    released = None if r.released_at is None else date_in_words(r.released_at, style)
    if r.accepted and r.accepted_at is not None:
        accepted = date_in_words(r.accepted_at, style)
        said = f"accepted and released {accepted}" if released == accepted else (
            f"accepted {accepted}" + (f", released {released}" if released else "")
        )  # fmt: skip
    else:
        said = r.status + (f", released {released}" if released else "")
    return f"Web archive edition, {said}"


def _where(r: EditionReference) -> str:
    """The edition's identifier, and its release's WACZ and SHA-256 once released."""
    return "; ".join(x for x in (r.archive_id, r.release) if x)


def _with_identifier(text: str, r: EditionReference) -> str:
    """A formatted entry that names the edition's identifier and release: a style without
    an archive field (IEEE, Harvard...) drops them, and the reader could not tell the
    edition, or the file, cited."""
    if r.archive_id in text:
        return text
    text = text.rstrip()
    ended = text.rstrip("”’\"')").endswith((".", "!", "?"))  # 'the title.”' ends it too
    return text + ("" if ended else ".") + f" {_where(r)}."


def _title_as_typed(r: EditionReference) -> str:
    """The edition's title with its name and its collection's as they were typed: MLA and
    Chicago title-case a title, and cited "Rivers-2026: Edition of ..." for rivers-2026, an
    identifier APA gave as typed. Each is marked with what follows it (citeproc-py sets a
    space between the parts of a title it title-cases: "rivers-2026 : Edition")."""

    def as_typed(text: str) -> str:
        return text if {"<", ">"} & set(text) else f'<span class="nocase">{text}</span>'

    name, collection = as_typed(r.name + ":"), as_typed(r.collection + ",")
    return f"{name} edition of the collection {collection} {r.period}"


def _bibtex(r: EditionReference) -> str:
    fields = [
        ("title", "{" + _bib_escape(r.title) + "}"),
        ("organization", _bib_escape(r.collection)),
        ("type", "Web archive edition"),
        *([("date", f"{r.issued:%Y-%m-%d}")] if r.issued else []),
        ("note", _bib_escape(r.note)),
        ("eprint", _bib_url(r.archive_id)),
        ("eprinttype", "archiver"),
    ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@dataset{{{r.key},\n{body}\n}}\n"


def _csl(r: EditionReference) -> dict[str, Any]:
    when = r.issued
    return {
        "id": r.key,
        "type": "dataset",
        # cited under the collection's name, as a capture with no author is under its site's
        "author": [{"literal": r.collection}],
        "title": r.title,
        **({"issued": {"date-parts": [[when.year, when.month, when.day]]}} if when else {}),
        "genre": f"Web archive edition, {r.status}",
        "archive": "Archiver",
        "archive_location": r.archive_id,
        "note": r.note,
    }


def _ris(r: EditionReference) -> str:
    when = r.issued
    lines = [
        ("TY", "DATA"),
        ("TI", r.title),
        ("AU", r.collection),
        *([("PY", str(when.year)), ("DA", f"{when:%Y/%m/%d}/")] if when else []),
        ("M3", f"Web archive edition, {r.status}"),
        ("DB", "Archiver"),
        ("AN", r.archive_id),
        ("N1", r.note),
        ("ER", ""),
    ]
    return "\r\n".join(f"{tag}  - {_one_line(value)}" for tag, value in lines)
