"""An edition's coverage: intended / captured / failed / excluded, overall and per domain.

Read from the ledger (:mod:`.ledger`) in one session, as a frozen :class:`Coverage`, and
written three ways: JSON (for tools), Markdown (for people) and the ledger as CSV. Each
lists every target of the edition exactly once: a URL is one target whatever number of
jobs and lists mentioned it.

*Intended* is every target not excluded; each intended target is captured, failed (a job
spent every attempt), pending (still queued) or missing (never captured). Failed, pending
and missing targets are the edition's gaps, each with the reason the reviewer gave.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.editions.models import Edition, EditionGap, EditionMember, EditionTarget
from archiver_app.editions.states import TargetState
from archiver_app.store.models import Collection, Snapshot
from archiver_app.units import counted
from archiver_app.urls import display_host, display_text, display_url


@dataclass(frozen=True)
class Counts:
    captured: int = 0
    failed: int = 0
    pending: int = 0
    missing: int = 0
    excluded: int = 0

    @property
    def intended(self) -> int:
        return self.captured + self.failed + self.pending + self.missing

    @property
    def gaps(self) -> int:
        return self.failed + self.pending + self.missing

    @classmethod
    def of(cls, states: list[TargetState]) -> Counts:
        c = Counter(states)
        return cls(
            captured=c[TargetState.CAPTURED],
            failed=c[TargetState.FAILED],
            pending=c[TargetState.PENDING],
            missing=c[TargetState.MISSING],
            excluded=c[TargetState.EXCLUDED],
        )

    def as_dict(self) -> dict[str, int]:
        return {"intended": self.intended, **asdict(self)}


@dataclass(frozen=True)
class TargetRow:
    """One line of the ledger, with its member capture and the gap's reason."""

    url: str
    domain: str
    source: str
    state: TargetState
    job_id: int | None = None
    excluded_rule: str | None = None
    detail: str | None = None
    attempts: int = 0
    snapshot_id: int | None = None
    snapshot_uid: str | None = None
    captured_at: datetime | None = None
    chosen_by: str | None = None
    gap_reason: str | None = None
    #: The member's HTTP status: a 4xx is a capture of the error page (the server said the
    #: page is gone or refused it), counted as captured and named by every report.
    http_status: int | None = None

    @property
    def is_gap(self) -> bool:
        return self.state.is_gap

    @property
    def error_answer(self) -> bool:
        """Captured, but what the server answered was an error page."""
        return self.http_status is not None and self.http_status >= 400


@dataclass(frozen=True)
class Coverage:
    edition: str
    collection: str
    period_start: datetime
    period_end: datetime
    state: str
    generated_at: datetime
    counts: Counts
    by_domain: dict[str, Counts] = field(default_factory=dict)
    excluded_by_rule: dict[str, int] = field(default_factory=dict)
    targets: tuple[TargetRow, ...] = ()

    @property
    def gaps(self) -> tuple[TargetRow, ...]:
        return tuple(t for t in self.targets if t.is_gap)


def read_coverage(s: Session, ed: Edition, now: datetime) -> Coverage:
    rows = s.execute(
        select(EditionTarget, EditionMember.snapshot_id, EditionMember.chosen_by,
               Snapshot.uid, Snapshot.captured_at, EditionGap.reason, Snapshot.http_status)
        .outerjoin(EditionMember, EditionMember.target_id == EditionTarget.id)
        .outerjoin(Snapshot, Snapshot.id == EditionMember.snapshot_id)
        .outerjoin(EditionGap, EditionGap.target_id == EditionTarget.id)
        .where(EditionTarget.edition_id == ed.id)
        .order_by(EditionTarget.domain, EditionTarget.url)
    ).all()  # fmt: skip
    targets = tuple(
        TargetRow(
            url=t.url, domain=t.domain, source=t.source, state=TargetState(t.state),
            job_id=t.job_id, excluded_rule=t.excluded_rule, detail=t.detail,
            attempts=t.attempts, snapshot_id=sid, snapshot_uid=uid, captured_at=at,
            chosen_by=chosen, http_status=status,
            # the reason given for a gap says nothing of a target captured since
            gap_reason=reason if TargetState(t.state).is_gap else None,
        )
        for t, sid, chosen, uid, at, reason, status in rows
    )  # fmt: skip
    domains: dict[str, list[TargetState]] = {}
    for t in targets:
        domains.setdefault(t.domain, []).append(t.state)
    rules = Counter(t.excluded_rule or "" for t in targets if t.state is TargetState.EXCLUDED)
    collection = s.scalar(select(Collection.slug).where(Collection.id == ed.collection_id))
    return Coverage(
        edition=ed.name,
        collection=collection or "",
        period_start=ed.period_start,
        period_end=ed.period_end,
        state=ed.state,
        generated_at=now,
        counts=Counts.of([t.state for t in targets]),
        by_domain={d: Counts.of(st) for d, st in sorted(domains.items())},
        excluded_by_rule=dict(rules.most_common()),
        targets=targets,
    )


def _iso(at: datetime | None) -> str | None:
    return at.isoformat(timespec="seconds") if at else None


def _target_json(t: TargetRow) -> dict[str, Any]:
    return {
        "url": t.url,
        "domain": t.domain,
        "source": t.source,
        "state": t.state.value,
        "job_id": t.job_id,
        "excluded_rule": t.excluded_rule,
        "error": t.detail,
        "attempts": t.attempts,
        "snapshot_id": t.snapshot_id,
        "snapshot_uid": t.snapshot_uid,
        "captured_at": _iso(t.captured_at),
        "http_status": t.http_status,
        "chosen_by": t.chosen_by,
        "gap_reason": t.gap_reason,
    }


def coverage_json(cov: Coverage) -> str:
    data = {
        "edition": cov.edition,
        "collection": cov.collection,
        "period": {"start": _iso(cov.period_start), "end": _iso(cov.period_end)},
        "state": cov.state,
        "generated_at": _iso(cov.generated_at),
        "counts": cov.counts.as_dict(),
        "by_domain": {d: c.as_dict() for d, c in cov.by_domain.items()},
        "excluded_by_rule": cov.excluded_by_rule,
        "targets": [_target_json(t) for t in cov.targets],
    }
    return json.dumps(data, indent=2) + "\n"


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


_SECTIONS = (
    (TargetState.FAILED, "Failed after retries", "attempts, last error; reason"),
    (TargetState.MISSING, "Missing (never captured)", "reason"),
    (TargetState.PENDING, "Pending (still queued)", "reason"),
    (TargetState.EXCLUDED, "Excluded, with the rule", "rule"),
    (TargetState.CAPTURED, "Captured", "capture"),
)


def _note(t: TargetRow) -> str:
    if t.state is TargetState.EXCLUDED:
        return f"`{_md(t.excluded_rule)}`"
    if t.state is TargetState.CAPTURED:
        answer = f", **HTTP {t.http_status}**" if t.error_answer else ""
        return f"{_iso(t.captured_at)} ({t.snapshot_uid}){answer}"
    reason = f"**{_md(t.gap_reason)}**" if t.gap_reason else "_no reason given_"
    if t.state is TargetState.FAILED:
        error = _md(display_text(t.detail or "")) or "no error recorded"
        return f"{counted(t.attempts, 'attempt')}, {error}; {reason}"
    return reason


def coverage_markdown(cov: Coverage) -> str:
    c = cov.counts
    lines = [
        f"# Edition {cov.edition}: coverage",
        "",
        f"Collection `{cov.collection}`, period {cov.period_start:%Y-%m-%d} to "
        f"{cov.period_end:%Y-%m-%d} (end excluded), state **{cov.state}**, "
        f"generated {_iso(cov.generated_at)}.",
        "",
        "| domain | intended | captured | failed | pending | missing | excluded |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| **all** | {c.intended} | {c.captured} | {c.failed} | {c.pending} | {c.missing} | "
        f"{c.excluded} |",
    ]
    for d, n in cov.by_domain.items():
        domain = _md(display_host(d)) or "(none)"
        lines.append(
            f"| {domain} | {n.intended} | {n.captured} | {n.failed} | {n.pending} |"
            f" {n.missing} | {n.excluded} |"
        )
    if cov.excluded_by_rule:
        lines += ["", "## Exclusions by rule", "", "| rule | URLs |", "|---|---:|"]
        lines += [f"| `{_md(rule)}` | {n} |" for rule, n in cov.excluded_by_rule.items()]
    for state, title, what in _SECTIONS:
        rows = [t for t in cov.targets if t.state is state]
        if rows:
            lines += ["", f"## {title} ({len(rows)})", "", f"| URL | {what} |", "|---|---|"]
            lines += [f"| {_md(display_url(t.url))} | {_note(t)} |" for t in rows]
    return "\n".join(lines) + "\n"


LEDGER_COLUMNS = (
    "url", "domain", "source", "state", "job_id", "excluded_rule", "error", "attempts",
    "snapshot_uid", "captured_at", "http_status", "chosen_by", "gap_reason",
)  # fmt: skip


def targets_csv(cov: Coverage) -> str:
    """The target ledger, one row per target, in the order of the reports."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LEDGER_COLUMNS)
    for t in cov.targets:
        j = _target_json(t)
        writer.writerow(["" if j[k] is None else j[k] for k in LEDGER_COLUMNS])
    return out.getvalue()
