"""Members do not change behind the reviewer's back: an accept freezes the members the
reviewer was shown or is refused naming what changed, and a reopen says which members the
library's newer captures change (asked before, told after)."""

from __future__ import annotations

import pytest

from archiver_app import cli
from archiver_app.crawl.jobs import create_job
from archiver_app.editions.states import EditionState, MemberChange, TransitionCode
from archiver_app.library import Library
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher
from tests.unit.editions.memory_site import H, build, crawl, index_everything


def _members(library: Library) -> dict[str, int | None]:
    return {t.url: t.snapshot_id for t in library.editions.coverage("e").targets}


def _capture_a_again(library: Library) -> None:
    create_job(library, [f"{H}/a"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, {f"{H}/a": MemoryPage()}))
    index_everything(library)


@pytest.fixture
def reviewed(library: Library) -> dict[str, int | None]:
    """Edition "e", ready to accept; the members the reviewer was shown."""
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    library.editions.explain_gap("e", f"{H}/dead", "gone")
    return _members(library)


def test_accept_refuses_members_that_changed_since_the_reviewer_looked(
    library: Library, reviewed: dict[str, int | None]
) -> None:
    _capture_a_again(library)  # a watch captured /a seconds after the reviewer looked
    change = library.editions.accept("e", reviewed)
    t = change.transition
    assert t.refused and t.code is TransitionCode.MEMBERS_CHANGED
    assert "1 member changed since you looked" in t.message
    now = _members(library)
    assert t.changed == (MemberChange(f"{H}/a", reviewed[f"{H}/a"], now[f"{H}/a"]),)
    assert library.editions.get("e").state is not EditionState.RESEARCH_READY

    assert not library.editions.accept("e", now).refused  # looked again: what is frozen
    assert _members(library) == now


def test_reopen_says_which_members_the_newer_captures_change(
    library: Library, reviewed: dict[str, int | None], capsys: pytest.CaptureFixture[str]
) -> None:
    assert not library.editions.accept("e", reviewed).refused
    _capture_a_again(library)
    assert _members(library) == reviewed  # frozen
    preview = library.editions.reopen_preview("e")
    assert [c.url for c in preview] == [f"{H}/a"] and preview[0].before == reviewed[f"{H}/a"]
    assert _members(library) == reviewed  # asking changed nothing

    assert cli.main(["--library", str(library.root), "edition", "reopen", "e"]) == 0
    out = capsys.readouterr().out
    now = _members(library)
    assert now[f"{H}/a"] != reviewed[f"{H}/a"] and now[f"{H}/a"] == preview[0].after
    assert "1 member changed" in out
    assert f"{H}/a: capture {reviewed[f'{H}/a']} -> capture {now[f'{H}/a']}" in out
