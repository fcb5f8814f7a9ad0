"""Coverage report of a job (HealthArchive's): what was intended, captured, failed, excluded.

Written when a job ends (or is aborted) next to the job, in ``<library>/jobs/<id>/``:

* ``coverage.json`` and ``coverage.md``: counts, the exclusions grouped by the rule that
  excluded them, and every failure with its attempts and last error;
* ``target-ledger.jsonl``: one line per URL the job knows (state, depth, attempts, reason,
  where it was discovered);
* ``capture-manifest.jsonl``: one line per attempt that produced a snapshot (snapshot uid,
  folder, WARC file, status, bytes, worker, ruleset version).

Every file is written to a temporary name and renamed, so a crash never leaves half a report.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.orm import Session, aliased

from archiver_app.crawl.figures import ABORTED, job_page_figures
from archiver_app.durable import atomic_write_text
from archiver_app.library import Library
from archiver_app.store.models import Job, Page, PageAttempt, PageState, Relation, Snapshot
from archiver_app.urls import display_text, display_url


@dataclass(frozen=True)
class CoveragePaths:
    json: str  # relative to the library root
    markdown: str
    ledger: str
    manifest: str


def job_folder(lib: Library, job_id: int) -> Path:
    return lib.root / "jobs" / str(job_id)


_COUNTERS = (
    "items_queued",
    "items_downloaded",
    "bytes_downloaded",
    "r1xx",
    "r2xx",
    "r3xx",
    "r4xx",
    "r5xx",
    "runk",
    "error_count",
    "retry_count",
)


def build_coverage(
    lib: Library, job_id: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The report, the ledger rows and the manifest rows (read in one session)."""
    with lib.session() as s:
        job = s.get(Job, job_id)
        if job is None:
            raise LookupError(job_id)
        pages = _pages(s, job_id)
        figures = job_page_figures(s, job_id)  # what the CLI, jobs and the Jobs panel say
        attempts = _attempts(s, job_id)
        config, status, name = dict(job.config), str(job.status), job.name
        counters = {k: getattr(job, k) for k in _COUNTERS}
        version = job.ruleset_version

    # Left waiting when the job was aborted: intended, never attempted (no rule left them out)
    excluded = [
        p
        for p in pages
        if p.state == PageState.SKIPPED and not (p.skip_reason or "").startswith(ABORTED)
    ]
    by_rule = Counter(p.skip_reason or "unknown" for p in excluded)
    report: dict[str, Any] = {
        "job": job_id,
        "name": name,
        "status": status,
        "generated_at": lib.clock().isoformat(timespec="seconds"),
        "seeds": config.get("seeds", []),
        "scope": config.get("scope"),
        "limits": config.get("limits", {}),
        "ruleset_version": version,
        "counts": {
            "intended": figures.intended,
            "captured": figures.captured,
            "failed": figures.failed,
            "excluded": figures.excluded,
            "not_attempted": figures.not_attempted,
            "aborted": figures.aborted,
        },
        "counters": counters,
        "excluded_by_rule": dict(by_rule.most_common()),
        "failed": [
            {"url": p.url, "attempts": p.attempts, "error": p.last_error}
            for p in pages
            if p.state == PageState.FAILED
        ],
        # Captured, but what was captured is the server's error page (a 404, a 503).
        "error_answers": [
            {"url": p.url, "http_status": p.http_status, "snapshot_id": p.snapshot_id}
            for p in pages
            if p.state == PageState.DONE and (p.http_status or 0) >= 400
        ],
    }
    report["counts"]["error_answers"] = len(report["error_answers"])
    return report, _ledger(pages), _manifest(attempts)


def _pages(s: Session, job_id: int) -> Sequence[Row[Any]]:
    """Every page of the job, with the first page it was discovered from: one nearer the
    seeds (a seed has none, whatever page links back to it)."""
    parent = aliased(Page)
    first_parent = (
        select(parent.url)
        .join(Relation, Relation.parent_page_id == parent.id)
        .where(Relation.child_page_id == Page.id, parent.depth < Page.depth)
        .order_by(parent.depth, parent.id)
        .limit(1)
        .scalar_subquery()
    )
    landed = (  # where the browser ended on the attempt that made the page's capture
        select(PageAttempt.final_url)
        .where(PageAttempt.snapshot_id == Page.snapshot_id)
        .limit(1)
        .scalar_subquery()
    )
    return s.execute(
        select(
            Page.url,
            Page.state,
            Page.depth,
            Page.attempts,
            Page.skip_reason,
            Page.last_error,
            Page.snapshot_id,
            first_parent.label("parent"),
            Snapshot.http_status,
            landed.label("final_url"),
        )
        .outerjoin(Snapshot, Snapshot.id == Page.snapshot_id)
        .where(Page.job_id == job_id)
        .order_by(Page.id)
    ).all()


def _attempts(s: Session, job_id: int) -> Sequence[Any]:  # rows of 14 columns
    """Every attempt of the job that made a snapshot, with that snapshot."""
    return s.execute(
        select(
            Page.url,
            PageAttempt.attempt,
            PageAttempt.outcome,
            PageAttempt.final_url,
            PageAttempt.http_status,
            PageAttempt.bytes_written,
            PageAttempt.worker_id,
            PageAttempt.ruleset_version,
            PageAttempt.started_at,
            Snapshot.id,
            Snapshot.uid,
            Snapshot.folder,
            Snapshot.warc_file,
            Snapshot.captured_at,
        )
        .join(Page, Page.id == PageAttempt.page_id)
        .join(Snapshot, Snapshot.id == PageAttempt.snapshot_id)
        .where(PageAttempt.job_id == job_id)
        .order_by(PageAttempt.id)
    ).all()


def _ledger(pages: Sequence[Row[Any]]) -> list[dict[str, Any]]:
    """One line a page; ``redirected_to``: where its capture ended when another address
    (its ``http_status`` is that page's answer)."""
    from archiver_app.compare.redirects import elsewhere

    return [
        {
            "url": p.url,
            "state": str(p.state),
            "depth": p.depth,
            "attempts": p.attempts,
            "reason": p.skip_reason if p.state == PageState.SKIPPED else p.last_error,
            "snapshot_id": p.snapshot_id,
            "http_status": p.http_status,
            "redirected_to": elsewhere(p.url, p.final_url),
            "discovered_from": p.parent,
        }
        for p in pages
    ]


def _manifest(attempts: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "url": a.url,
            "final_url": a.final_url,
            "attempt": a.attempt,
            "outcome": a.outcome,
            "http_status": a.http_status,
            "bytes": a.bytes_written,
            "worker": a.worker_id,
            "ruleset_version": a.ruleset_version,
            "snapshot_id": a.id,
            "snapshot_uid": a.uid,
            "folder": a.folder,
            "warc_file": a.warc_file,
            "captured_at": a.captured_at.isoformat() if a.captured_at else None,
        }
        for a in attempts
    ]


def render_markdown(report: dict[str, Any]) -> str:
    c = report["counts"]
    lines = [
        f"# Coverage of job {report['job']}: {display_text(report['name'] or '')}",
        "",
        f"Status **{report['status']}**, scope `{report['scope']}`, "
        f"rules v{report['ruleset_version']}, generated {report['generated_at']}.",
        "",
        "| | URLs |",
        "|---|---:|",
        f"| intended | {c['intended']} |",
        f"| captured | {c['captured']} |",
        f"| of them, an error answer (4xx, 5xx) | {c['error_answers']} |",
        f"| failed (after retries) | {c['failed']} |",
        f"| excluded | {c['excluded']} |",
        f"| not attempted | {c['not_attempted']} |",
        *([f"| of them, left when the job was aborted | {c['aborted']} |"] if c["aborted"] else []),
        "",
        "## Seeds",
        "",
        *[f"- {display_url(seed)}" for seed in report["seeds"]],
        "",
    ]
    if report["excluded_by_rule"]:
        lines += ["## Excluded, by rule", "", "| rule | URLs |", "|---|---:|"]
        lines += [f"| {_md(rule)} | {n} |" for rule, n in report["excluded_by_rule"].items()]
        lines.append("")
    if report["error_answers"]:
        lines += ["## Captured with an error answer", "", "| URL | status |", "|---|---:|"]
        lines += [
            f"| {_md(display_url(e['url']))} | {e['http_status']} |"
            for e in report["error_answers"]
        ]
        lines.append("")
    if report["failed"]:
        lines += ["## Failed", "", "| URL | attempts | last error |", "|---|---:|---|"]
        for f in report["failed"]:
            error = _md(display_text(f["error"] or ""))
            lines.append(f"| {_md(display_url(f['url']))} | {f['attempts']} | {error} |")
        lines.append("")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_coverage_report(lib: Library, job_id: int) -> CoveragePaths:
    report, ledger, manifest = build_coverage(lib, job_id)
    folder = job_folder(lib, job_id)
    folder.mkdir(parents=True, exist_ok=True)
    rel = f"jobs/{job_id}"
    atomic_write_text(folder / "coverage.json", json.dumps(report, indent=2) + "\n")
    atomic_write_text(folder / "coverage.md", render_markdown(report))
    atomic_write_text(folder / "target-ledger.jsonl", "".join(json.dumps(r) + "\n" for r in ledger))
    atomic_write_text(
        folder / "capture-manifest.jsonl", "".join(json.dumps(r) + "\n" for r in manifest)
    )
    return CoveragePaths(
        json=f"{rel}/coverage.json",
        markdown=f"{rel}/coverage.md",
        ledger=f"{rel}/target-ledger.jsonl",
        manifest=f"{rel}/capture-manifest.jsonl",
    )
