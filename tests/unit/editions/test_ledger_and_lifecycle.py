"""The ledger, coverage and lifecycle of an edition over real crawl queues (memory site).

The pages are fetched by the in-memory site fetcher (real queue, attempts, rules, rows);
the integration test in tests/integration/editions does the same with real Chromium.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest
from sqlalchemy import select, update

from archiver_app.api.deletion import DeleteCode
from archiver_app.crawl.jobs import create_job
from archiver_app.editions.service import EditOutcome, frozen_holders
from archiver_app.editions.states import EditionState, TargetState, TransitionCode
from archiver_app.library import Library
from archiver_app.mirror.scrub import verify_library
from archiver_app.store.models import File, Snapshot
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher
from tests.helpers.snapshots import add_snapshot
from tests.unit.editions.memory_site import H, build, crawl, index_everything


def test_coverage_counts_follow_the_jobs_outcomes_rules_and_the_list(library: Library) -> None:
    build(library)
    library.editions.create(
        "rivers", "rivers-2026", year=2026, targets_text=f"# mine\n{H}/a\n{H}/listed\n"
    )
    cov = library.editions.coverage("rivers-2026")
    by_url = {t.url: t for t in cov.targets}
    assert len(by_url) == len(cov.targets) == 7  # /a is in the crawl and the list: once
    assert by_url[f"{H}/"].source == "seed" and by_url[f"{H}/other"].source == "seed"
    assert by_url[f"{H}/a"].source == "list" and by_url[f"{H}/b"].source == "job"
    assert by_url[f"{H}/private/x"].state is TargetState.EXCLUDED
    assert by_url[f"{H}/private/x"].excluded_rule == "ignore '/private/'"
    assert by_url[f"{H}/dead"].state is TargetState.FAILED
    assert by_url[f"{H}/dead"].attempts == 2
    assert by_url[f"{H}/listed"].state is TargetState.MISSING
    c = cov.counts
    assert (c.intended, c.captured, c.failed, c.missing, c.excluded) == (6, 4, 1, 1, 1)
    assert cov.by_domain["site.test"].captured == 4
    assert cov.excluded_by_rule == {"ignore '/private/'": 1}
    report = json.loads(library.editions.coverage_json("rivers-2026"))
    assert sorted(t["url"] for t in report["targets"]) == sorted(by_url)
    md = library.editions.coverage_markdown("rivers-2026")
    assert all(md.count(f"| {url} |") == 1 for url in by_url)


def test_jobs_and_captures_outside_the_period_do_not_count(library: Library) -> None:
    build(library)  # the library's clock: now, not 2020
    library.editions.create("rivers", "old", year=2020, targets_text=f"{H}/a\n")
    cov = library.editions.coverage("old")
    assert [(t.url, t.state) for t in cov.targets] == [(f"{H}/a", TargetState.MISSING)]
    assert library.editions.get("old").state is EditionState.PLANNED


def test_lifecycle_from_planned_to_research_ready_and_back(library: Library) -> None:
    build(library)
    library.editions.create("rivers", "e", year=2026, targets_text=f"{H}/listed\n")
    assert library.editions.get("e").state is EditionState.IN_PROGRESS  # nothing indexed
    refused = library.editions.accept("e").transition
    assert refused.code is TransitionCode.NOT_READY
    index_everything(library)
    assert library.editions.refresh("e").transition.state is EditionState.SEARCH_READY

    refused = library.editions.accept("e").transition
    assert refused.code is TransitionCode.UNEXPLAINED_GAPS
    assert set(refused.unexplained) == {f"{H}/dead", f"{H}/listed"}
    assert library.editions.get("e").state is EditionState.SEARCH_READY

    gap = library.editions.explain_gap("e", f"{H}/dead", "the server is down for good").edit
    assert gap.code is EditOutcome.DONE
    not_gap = library.editions.explain_gap("e", f"{H}/a", "x")
    assert not_gap.edit.code is EditOutcome.NOT_A_GAP
    assert library.editions.accept("e").transition.unexplained == (f"{H}/listed",)
    library.editions.explain_gap("e", f"{H}/listed", "removed by its owner in 2025")
    accepted = library.editions.accept("e")
    assert not accepted.refused
    assert library.editions.get("e").state is EditionState.RESEARCH_READY

    with library.session() as s:
        members = set(s.scalars(select(Snapshot.id)))
        held = frozen_holders(s, members)
    assert set(held.values()) == {"e"} and len(held) == 4
    assert library.editions.explain_gap("e", f"{H}/listed", "changed").refused

    assert not library.editions.reopen("e").refused
    assert library.editions.get("e").state is EditionState.NEEDS_REVIEW
    assert library.editions.reopen("e").transition.code is TransitionCode.NOT_ACCEPTED
    with library.session() as s:
        assert frozen_holders(s, members) == {}


def test_a_frozen_member_cannot_be_deleted_until_the_edition_is_reopened(
    library: Library,
) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    library.editions.explain_gap("e", f"{H}/dead", "gone")
    assert not library.editions.accept("e").refused
    member = next(
        t.snapshot_id for t in library.editions.coverage("e").targets if t.url == f"{H}/a"
    )
    assert member is not None

    result, changes = library.snapshots.delete([member])
    assert [o.code for o in result.outcomes] == [DeleteCode.FROZEN]
    assert "edition e" in result.outcomes[0].message and not changes.snapshots
    assert library.snapshots.detail(member) is not None

    library.editions.reopen("e")
    result, changes = library.snapshots.delete([member])
    assert result.deleted == [member] and changes.snapshot_ids == {member}
    assert result.editions_to_review == ("e",)
    assert library.snapshots.detail(member) is None
    e = library.editions.get("e")
    assert e.state is EditionState.NEEDS_REVIEW and "deleted" in (e.review_note or "")
    library.editions.refresh("e")
    gaps = {t.url: t.state for t in library.editions.coverage("e").gaps}
    assert gaps[f"{H}/a"] is TargetState.MISSING
    refused = library.editions.accept("e").transition
    assert refused.unexplained == (f"{H}/a",)


def test_a_damaged_member_found_by_verify_flags_the_edition_for_review(
    library: Library,
) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    library.editions.explain_gap("e", f"{H}/dead", "gone")
    assert not library.editions.accept("e").refused
    # Every file is good on disk except one member's, which rotted.
    with library.write() as s:
        files = list(s.scalars(select(File)))
        for f in files:
            body = b"good bytes"
            path = library.abspath(f.path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
            f.size, f.sha256 = len(body), hashlib.sha256(body).hexdigest()
        library.abspath(files[0].path).write_bytes(b"rotten bytes")

    result = verify_library(library, repair=False)
    assert len(result.corrupted) == 1 and result.editions_to_review == ["e"]
    e = library.editions.get("e")
    assert e.state is EditionState.RESEARCH_READY and e.flagged and e.frozen
    assert "damaged" in (e.review_note or "")


def test_the_user_can_choose_another_capture_to_represent_a_url(library: Library) -> None:
    build(library)
    library.editions.create("rivers", "e", year=2026)
    first = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    assert first.chosen_by == "default" and first.snapshot_id is not None
    # a later capture of /a arrives: by default it would represent /a
    later_job = create_job(library, [f"{H}/a"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, {f"{H}/a": MemoryPage()}))
    library.editions.refresh("e")
    latest = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    assert latest.snapshot_id != first.snapshot_id and later_job

    chosen = library.editions.choose_member("e", f"{H}/a", first.snapshot_id)
    assert not chosen.refused
    library.editions.refresh("e")  # the choice outlives refreshes
    kept = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    assert (kept.snapshot_id, kept.chosen_by) == (first.snapshot_id, "user")
    wrong = library.editions.choose_member("e", f"{H}/a", latest.snapshot_id + 1000)
    assert wrong.edit.code is EditOutcome.NOT_A_CAPTURE
    other = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/b")
    assert library.editions.choose_member("e", f"{H}/a", other.snapshot_id or 0).refused


def test_a_listed_url_a_crawl_excluded_is_still_intended(library: Library) -> None:
    build(library)
    library.editions.create("rivers", "e", year=2026, targets_text=f"{H}/private/x\n")
    target = next(t for t in library.editions.coverage("e").targets if "private" in t.url)
    assert (target.source, target.state) == ("list", TargetState.MISSING)
    assert target.excluded_rule == "ignore '/private/'"  # what the crawl did, kept


def test_a_member_that_is_an_error_page_is_named_by_every_report(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """A capture of a 404 stands for its URL (it is what the server had), and the reports,
    the ledger and ``edition show`` say that its answer was an error."""
    from archiver_app.cli import main
    from archiver_app.editions.coverage import targets_csv

    build(library)
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.url == f"{H}/b").values(http_status=404))
    library.editions.create("rivers", "rivers-2026", year=2026)
    cov = library.editions.coverage("rivers-2026")
    gone = next(t for t in cov.targets if t.url == f"{H}/b")
    assert gone.state is TargetState.CAPTURED and gone.http_status == 404 and gone.error_answer
    assert [t.url for t in cov.targets if t.error_answer] == [f"{H}/b"]
    report = json.loads(library.editions.coverage_json("rivers-2026"))
    assert {t["url"]: t["http_status"] for t in report["targets"]}[f"{H}/a"] == 200
    assert {t["url"]: t["http_status"] for t in report["targets"]}[f"{H}/b"] == 404
    md = library.editions.coverage_markdown("rivers-2026")
    assert f"| {H}/b | " in md and "**HTTP 404**" in md and md.count("**HTTP") == 1
    rows = list(csv.DictReader(io.StringIO(targets_csv(cov))))
    assert {r["url"]: r["http_status"] for r in rows}[f"{H}/b"] == "404"
    assert main(["--library", str(library.root), "edition", "show", "rivers-2026"]) == 0
    out = capsys.readouterr().out
    assert f"  captured 404  {H}/b  (the server answered with an error)" in out.splitlines()


def test_a_capture_that_would_not_count_as_captured_cannot_be_chosen(library: Library) -> None:
    """One rule for the ledger and for a choice: complete, not a 5xx answer, in the period
    (or by a job queued for the edition)."""
    from datetime import UTC, datetime

    from archiver_app.editions.models import EditionMember

    build(library)
    library.editions.create("rivers", "e", year=2026)
    member = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    error = add_snapshot(library, f"{H}/a", collection="rivers",
                         captured_at=datetime(2026, 1, 2, tzinfo=UTC))  # fmt: skip
    with library.write() as s:
        s.execute(update(Snapshot).where(Snapshot.id == error).values(http_status=500))
    before = add_snapshot(library, f"{H}/a", collection="rivers",
                          captured_at=datetime(2025, 12, 31, 23, tzinfo=UTC))  # fmt: skip

    refused = library.editions.choose_member("e", f"{H}/a", error)
    assert refused.edit.code is EditOutcome.NOT_COUNTED
    assert "HTTP 500 error answer" in refused.edit.message
    refused = library.editions.choose_member("e", f"{H}/a", before)
    assert refused.edit.code is EditOutcome.NOT_COUNTED
    assert "outside the edition's period (2026-01-01 to 2026-12-31)" in refused.edit.message
    kept = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    assert (kept.snapshot_id, kept.chosen_by) == (member.snapshot_id, "default")

    with library.write() as s:  # a choice made before the rule: the ledger does not count it
        s.execute(update(EditionMember).where(EditionMember.snapshot_id == member.snapshot_id)
                  .values(snapshot_id=error, chosen_by="user"))  # fmt: skip
    library.editions.refresh("e")
    kept = next(t for t in library.editions.coverage("e").targets if t.url == f"{H}/a")
    assert (kept.snapshot_id, kept.chosen_by) == (member.snapshot_id, "default")
