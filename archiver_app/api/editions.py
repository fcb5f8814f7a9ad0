"""``lib.editions``: a collection's editions, their coverage, review and release.

Frozen views for the CLI and the GUI; every edit returns what changed (``Changes``) with
the outcome as a value: a refused accept says why and lists the unexplained gaps. The work
itself is in :mod:`archiver_app.editions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select

from archiver_app.api.changes import Changes
from archiver_app.editions import service
from archiver_app.editions.coverage import Counts, Coverage, coverage_json, coverage_markdown
from archiver_app.editions.models import Edition
from archiver_app.editions.states import (
    EditionState,
    MemberChange,
    TargetState,
    Transition,
    is_flagged,
)
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import Collection
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.editions.release import ReleaseInPlace

__all__ = [
    "CaptureQueued",
    "Counts",
    "Coverage",
    "EditResult",
    "EditionState",
    "EditionSummary",
    "EditionsManager",
    "MemberChange",
    "ReleaseView",
    "StateChange",
    "TargetState",
]


@dataclass(frozen=True)
class EditionSummary:
    id: int
    name: str
    collection: str  # its slug
    collection_name: str
    period_start: datetime
    period_end: datetime  # exclusive
    state: EditionState
    accepted_at: datetime | None
    review_note: str | None

    @property
    def frozen(self) -> bool:
        return self.state.frozen

    @property
    def flagged(self) -> bool:
        """Accepted and still frozen, but a damaged copy was found since (``review_note``);
        accepting it again clears the flag."""
        return is_flagged(self.state, self.review_note)

    @property
    def period_label(self) -> str:
        last = self.period_end.date().toordinal() - 1
        end = date.fromordinal(last)
        start = self.period_start.date()
        if start.month == 1 and start.day == 1 and end == date(start.year, 12, 31):
            return str(start.year)
        return f"{start:%Y-%m-%d} to {end:%Y-%m-%d}"


@dataclass(frozen=True)
class ReleaseView:
    """One release of an edition on record (``edition show``, the coverage view): its
    WACZ as written, its SHA-256 now, whether it is signed, and whether ``archiver cite``
    quotes it (else ``why`` not)."""

    path: str
    sha256: str
    signed: bool
    released_at: datetime | None
    state: str  # the edition's state when released
    cited: bool
    why: str | None

    @property
    def file_name(self) -> str:
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class StateChange:
    transition: Transition
    changes: Changes

    @property
    def refused(self) -> bool:
        return self.transition.refused


@dataclass(frozen=True)
class EditResult:
    edit: service.Edit
    changes: Changes

    @property
    def refused(self) -> bool:
        return self.edit.code is not service.EditOutcome.DONE


@dataclass(frozen=True)
class CaptureQueued:
    """``job_id`` None: nothing was queued, ``message`` says why."""

    job_id: int | None
    urls: int
    message: str
    changes: Changes


_EDITED = Changes(collections=True)


class EditionsManager:
    """``lib.editions``. Reads are short sessions; edits are one write transaction each."""

    def __init__(self, library: Library) -> None:
        self._lib = library

    # ------------------------------------------------------------------ reads

    def list(self, collection: str | None = None) -> list[EditionSummary]:
        with self._lib.session() as s:
            stmt = (
                select(Edition, Collection.slug, Collection.name)
                .join(Collection, Collection.id == Edition.collection_id)
                .order_by(Collection.slug, Edition.period_start.desc(), Edition.name)
            )
            if collection is not None:
                stmt = stmt.where(Collection.slug == collection)
            return [_summary(ed, slug, name) for ed, slug, name in s.execute(stmt)]

    def get(self, name: str) -> EditionSummary:
        with self._lib.session() as s:
            ed = service.get_edition(s, name)
            coll = s.get(Collection, ed.collection_id)
            return _summary(ed, coll.slug if coll else "", coll.name if coll else "")

    def coverage(self, name: str) -> Coverage:
        return service.coverage(self._lib, name)

    def releases(self, name: str) -> tuple[ReleaseView, ...]:
        """Every release of ``name`` on record, newest first, the one ``archiver cite``
        quotes marked (an unsigned release never takes a signed one's place)."""
        from archiver_app.editions.recorded import judged_releases

        return tuple(
            ReleaseView(j.release.path, j.release.sha256, j.release.signed,
                        j.release.released_at, j.release.state, j.cited, j.why)
            for j in judged_releases(self._lib, name)
        )  # fmt: skip

    def coverage_json(self, name: str) -> str:
        return coverage_json(self.coverage(name))

    def coverage_markdown(self, name: str) -> str:
        return coverage_markdown(self.coverage(name))

    # ------------------------------------------------------------------ edits

    def create(
        self,
        collection: str,
        name: str,
        *,
        year: int | None = None,
        start: date | None = None,
        end: date | None = None,
        targets_text: str | None = None,
    ) -> Changes:
        """Create an edition; ``targets_text``: a URL list (one a line, ``#`` comments).

        Raises:
            InputError: a bad name, period or collection, or a malformed line in the list
                (each named by its line number). Nothing is written then.
        """
        from archiver_app.importers.urllists import parse_url_list
        from archiver_app.urls import normalize_url

        period = service.period_of(year, start, end)
        urls: list[str] = []
        if targets_text is not None:
            parsed = parse_url_list(targets_text)
            if parsed.problems:
                raise InputError(
                    f"the target list has {counted(len(parsed.problems), 'bad line')}; nothing was "
                    f"created. First: {parsed.problems[0]}",
                    details="\n".join(parsed.problems),
                )
            # kept in the form captures store (an IDNA host, UTF-8 escapes), as typed or not
            urls = [normalize_url(u) or u for u in parsed.urls]
        service.create_edition(self._lib, collection, name, period, urls)
        return _EDITED

    def refresh(self, name: str) -> StateChange:
        return StateChange(service.refresh(self._lib, name), _EDITED)

    def accept(self, name: str, seen: Mapping[str, int | None] | None = None) -> StateChange:
        """Accept ``name``; ``seen``: the members the reviewer was shown (URL -> capture
        id): refused, naming them, when the library changed them since."""
        return StateChange(service.accept(self._lib, name, seen), _EDITED)

    def reopen(self, name: str) -> StateChange:
        """Reopen ``name``; its transition's ``changed`` names the members that changed."""
        return StateChange(service.reopen(self._lib, name), _EDITED)

    def reopen_preview(self, name: str) -> tuple[MemberChange, ...]:
        """The members reopening ``name`` would change now (newer captures since)."""
        return service.reopen_preview(self._lib, name)

    def explain_gap(self, name: str, url: str, reason: str) -> EditResult:
        return EditResult(service.explain_gap(self._lib, name, url, reason), _EDITED)

    def choose_member(self, name: str, url: str, snapshot_id: int) -> EditResult:
        return EditResult(service.choose_member(self._lib, name, url, snapshot_id), _EDITED)

    def capture_missing(self, name: str) -> CaptureQueued:
        """Queue the failed and missing URLs as one capture job (run by the worker, the
        GUI's runner or ``archiver worker``); its captures count in the edition."""
        from archiver_app.crawl.inline import create_capture_job

        ed = self.get(name)
        if ed.frozen:
            return CaptureQueued(
                None, 0, f"edition {name} is accepted and frozen; reopen it first", Changes()
            )
        self.refresh(name)
        urls = service.gap_urls(self._lib, name, (TargetState.FAILED, TargetState.MISSING))
        if not urls:
            return CaptureQueued(None, 0, "no missing URL to capture", Changes())
        job_id = create_capture_job(self._lib, urls, collection=ed.collection)
        service.add_job(self._lib, name, job_id)
        service.refresh(self._lib, name)
        return CaptureQueued(
            job_id, len(urls), f"queued {counted(len(urls), 'URL')} as job {job_id}",
            Changes(collections=True, jobs=True),
        )  # fmt: skip

    def release_in_place(self, output: Path) -> ReleaseInPlace | None:
        """What a release to ``output`` would replace (the WACZ and reports there, and
        whether they are the release of its edition's current acceptance, the one ``cite``
        names); None when nothing is there."""
        from archiver_app.editions.release import release_in_place

        return release_in_place(self._lib, output)

    def queue_release(
        self,
        name: str,
        output: Path,
        *,
        sign: bool = False,
        overwrite: bool = False,
        timestamp: str | None = None,
    ) -> int:
        """Enqueue the release of ``name`` as an export job; return the job's id
        (``timestamp``: an authority's URL, to timestamp the signature; with ``sign``)."""
        from archiver_app.editions.release import release_config
        from archiver_app.jobs import JobKind, enqueue

        ed = self.get(name)
        return enqueue(
            self._lib,
            JobKind.EXPORT,
            release_config(name, output, sign=sign, overwrite=overwrite, timestamp=timestamp),
            name=f"Release of edition {name} to {output}",
            collection=ed.collection,
        )


def _summary(ed: Edition, slug: str, collection_name: str) -> EditionSummary:
    return EditionSummary(
        id=ed.id,
        name=ed.name,
        collection=slug,
        collection_name=collection_name,
        period_start=ed.period_start,
        period_end=ed.period_end,
        state=EditionState(ed.state),
        accepted_at=ed.accepted_at,
        review_note=ed.review_note,
    )
