"""An edition's state follows its causes: a job that ends refreshes the editions it feeds,
without anyone opening them (``edition list`` and the sidebar read the stored state)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.crawl.jobs import abort_job, create_job
from archiver_app.editions.states import EditionState, TargetState
from archiver_app.library import Library
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher
from tests.unit.editions.memory_site import H, build, crawl, index_everything, site


def _site() -> dict[str, MemoryPage]:
    return {**site(), f"{H}/listed": MemoryPage()}


def test_a_capture_of_a_missing_url_moves_the_edition_without_opening_it(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    library.ensure_collection("rivers")
    assert main(["--library", str(library.root), "edition", "list"]) == 0
    assert capsys.readouterr().out.startswith("no editions yet")  # said, not left blank
    library.editions.create("rivers", "e", year=2026, targets_text=f"{H}/a\n{H}/listed\n")
    assert library.editions.get("e").state is EditionState.PLANNED

    create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, _site()))

    # Read as stored: no refresh, no show.
    assert library.editions.get("e").state is EditionState.IN_PROGRESS  # not indexed yet
    c = library.editions.coverage("e").counts
    assert (c.intended, c.captured, c.missing) == (2, 1, 1)
    assert main(["--library", str(library.root), "edition", "list"]) == 0
    assert "\tin_progress" in capsys.readouterr().out


def test_a_new_unindexed_capture_takes_a_search_ready_edition_back(library: Library) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    assert library.editions.get("e").state is EditionState.SEARCH_READY
    # A second crawl finds /listed; its capture is not in the full-text index yet.
    create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, _site()))
    listed = {t.url: t for t in library.editions.coverage("e").targets}[f"{H}/listed"]
    assert (listed.source, listed.state) == ("seed", TargetState.CAPTURED)
    assert library.editions.get("e").state is EditionState.IN_PROGRESS
    index_everything(library)
    assert library.editions.refresh("e").transition.state is EditionState.SEARCH_READY


def test_an_aborted_job_leaves_its_pages_missing_not_pending_or_excluded(
    library: Library,
) -> None:
    library.ensure_collection("rivers")
    library.editions.create("rivers", "e", year=2026)
    job = create_job(library, [f"{H}/a", f"{H}/b"], scope="page", collection="rivers")
    library.editions.refresh("e")
    assert library.editions.coverage("e").counts.pending == 2
    assert library.editions.get("e").state is EditionState.IN_PROGRESS

    abort_job(library, job)

    c = library.editions.coverage("e").counts  # stored by the abort, not by a refresh
    assert (c.pending, c.missing, c.excluded) == (0, 2, 0)
    assert library.editions.get("e").state is EditionState.PLANNED  # nothing reached


def test_jobs_elsewhere_and_accepted_editions_are_left_alone(library: Library) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "frozen", year=2026)
    library.editions.create("rivers", "old", year=2020, targets_text=f"{H}/listed\n")
    for url in (f"{H}/dead",):
        library.editions.explain_gap("frozen", url, "gone for good")
    assert not library.editions.accept("frozen").refused
    before = library.editions.coverage("frozen").counts

    library.ensure_collection("other")
    create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    create_job(library, [f"{H}/listed"], scope="page", collection="other")
    crawl(library, MemorySiteFetcher(library, _site()))

    assert library.editions.get("frozen").state is EditionState.RESEARCH_READY
    assert library.editions.coverage("frozen").counts == before  # membership is fixed
    old = library.editions.coverage("old")  # 2020: today's captures are not in it
    assert [t.state for t in old.targets] == [TargetState.MISSING]
    assert library.editions.get("old").state is EditionState.PLANNED


def test_an_import_fills_the_gaps_of_its_collections_editions(
    library: Library, tmp_path: Path
) -> None:
    from tests.helpers.warcs import site, write_warc

    library.ensure_collection("c")
    pages = [f"https://example.org/page{i}" for i in range(2)]
    library.editions.create("c", "c-2024", year=2024, targets_text="\n".join(pages))
    assert library.editions.coverage("c-2024").counts.missing == 2

    warc = write_warc(tmp_path / "site.warc.gz", site(2))  # captured in March 2024
    args = ["--library", str(library.root), "import", str(warc), "--collection", "c"]
    assert main(args) == 0

    c = library.editions.coverage("c-2024").counts  # as stored by the import's end
    assert (c.captured, c.missing) == (2, 0)
    assert library.editions.get("c-2024").state is EditionState.SEARCH_READY


def test_deleting_a_member_of_an_edition_under_review_updates_it_at_once(
    library: Library,
) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    member = {t.url: t for t in library.editions.coverage("e").targets}[f"{H}/b"]
    assert member.state is TargetState.CAPTURED and member.snapshot_id is not None

    result, _changes = library.snapshots.delete([member.snapshot_id])
    assert not result.editions_to_review  # not accepted: nothing to review

    gone = {t.url: t for t in library.editions.coverage("e").targets}[f"{H}/b"]
    assert (gone.state, gone.snapshot_id) == (TargetState.MISSING, None)
    c = library.editions.coverage("e").counts
    assert (c.captured, c.missing) == (3, 1)


def test_a_worker_killed_before_the_editions_took_a_job_in_is_made_up_for(
    library: Library,
) -> None:
    from sqlalchemy import update

    from archiver_app.editions.models import EditionMember, EditionTarget
    from archiver_app.store.models import Job

    library.ensure_collection("rivers")
    library.editions.create("rivers", "e", year=2026, targets_text=f"{H}/listed\n")
    job = create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, _site()))
    # What a worker killed right after the job's end leaves: no coverage report yet, and
    # the edition as it was before.
    with library.write() as s:
        s.execute(update(Job).where(Job.id == job).values(status="completed", coverage_json=None))
        s.execute(update(EditionTarget).values(state=TargetState.PENDING.value))
        s.execute(update(EditionMember).values(snapshot_id=None))
    assert library.editions.coverage("e").counts.pending == 1

    crawl(library, MemorySiteFetcher(library, _site()))  # the next worker finishes the end

    c = library.editions.coverage("e").counts
    assert (c.pending, c.captured) == (0, 1)


def test_a_gap_captured_since_its_reason_was_given_shows_no_reason(library: Library) -> None:
    """The ledgers kept "never existed" beside a target that had been captured since."""
    library.ensure_collection("rivers")
    library.editions.create("rivers", "e", year=2026, targets_text=f"{H}/listed\n")
    library.editions.explain_gap("e", f"{H}/listed", "never existed")
    [gap] = library.editions.coverage("e").gaps
    assert gap.gap_reason == "never existed"

    create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, _site()))
    [target] = library.editions.coverage("e").targets
    assert target.state is TargetState.CAPTURED and target.gap_reason is None
