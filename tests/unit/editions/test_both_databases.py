"""The edition flow on SQLite and on PostgreSQL (shared libraries): ledger, accept, frozen."""

from __future__ import annotations

from archiver_app.api.deletion import DeleteCode
from archiver_app.editions.states import EditionState, TargetState, TransitionCode
from archiver_app.library import Library
from tests.unit.editions.memory_site import H, build, index_everything


def test_an_edition_is_built_accepted_and_frozen(any_library: Library) -> None:
    lib = any_library
    build(lib)
    index_everything(lib)  # PostgreSQL has no full-text table yet: every capture counts
    lib.editions.create("rivers", "e", year=2026, targets_text=f"{H}/listed\n")
    cov = lib.editions.coverage("e")
    states = {t.url: t.state for t in cov.targets}
    assert states[f"{H}/private/x"] is TargetState.EXCLUDED
    assert states[f"{H}/dead"] is TargetState.FAILED
    assert states[f"{H}/listed"] is TargetState.MISSING
    assert cov.counts.captured == 4
    assert lib.editions.get("e").state is EditionState.SEARCH_READY
    refused = lib.editions.accept("e").transition
    assert refused.code is TransitionCode.UNEXPLAINED_GAPS
    for url in (f"{H}/dead", f"{H}/listed"):
        assert not lib.editions.explain_gap("e", url, "gone").refused
    assert not lib.editions.accept("e").refused
    member = next(t.snapshot_id for t in cov.targets if t.url == f"{H}/a")
    result, _ = lib.snapshots.delete([member or 0])
    assert [o.code for o in result.outcomes] == [DeleteCode.FROZEN]
