"""Every move of the edition lifecycle, decided by the one transition function."""

from __future__ import annotations

import pytest

from archiver_app.editions.states import (
    EditionEvent,
    EditionState,
    Facts,
    TransitionCode,
    transition,
)

S = EditionState
READY = Facts(captured=3, attempted=4)


@pytest.mark.parametrize(
    ("facts", "state"),
    [
        (Facts(), S.PLANNED),
        (Facts(pending=2), S.IN_PROGRESS),
        (Facts(captured=1, attempted=1, pending=1), S.IN_PROGRESS),
        (Facts(captured=2, attempted=2, unindexed=1), S.IN_PROGRESS),
        (Facts(attempted=1), S.IN_PROGRESS),  # only failures so far
        (READY, S.SEARCH_READY),
    ],
)
def test_progress_follows_the_ledger(facts: Facts, state: EditionState) -> None:
    for start in (S.PLANNED, S.IN_PROGRESS, S.SEARCH_READY):
        t = transition(start, EditionEvent.PROGRESS, facts)
        assert t.state is state and not t.refused
        assert t.code is (TransitionCode.UNCHANGED if start is state else TransitionCode.MOVED)


@pytest.mark.parametrize("state", [S.RESEARCH_READY, S.NEEDS_REVIEW])
def test_progress_leaves_accepted_and_reopened_editions_to_people(state: EditionState) -> None:
    t = transition(state, EditionEvent.PROGRESS, Facts(pending=5))
    assert t.state is state and t.code is TransitionCode.UNCHANGED


@pytest.mark.parametrize(
    ("facts", "code"),
    [
        (Facts(), TransitionCode.NOTHING_CAPTURED),
        (Facts(captured=1, pending=1), TransitionCode.NOT_READY),
        (Facts(captured=1, unindexed=1), TransitionCode.NOT_READY),
        (Facts(captured=1, unexplained=("u1", "u2")), TransitionCode.UNEXPLAINED_GAPS),
    ],
)
def test_accept_is_refused_with_a_reason(facts: Facts, code: TransitionCode) -> None:
    t = transition(S.SEARCH_READY, EditionEvent.ACCEPT, facts)
    assert t.refused and t.code is code and t.state is S.SEARCH_READY and t.message
    assert t.unexplained == (facts.unexplained if code is TransitionCode.UNEXPLAINED_GAPS else ())


def test_accept_reopen_and_change() -> None:
    for start in (S.SEARCH_READY, S.NEEDS_REVIEW):
        assert transition(start, EditionEvent.ACCEPT, READY).state is S.RESEARCH_READY
    assert transition(S.RESEARCH_READY, EditionEvent.ACCEPT, READY).code is (
        TransitionCode.ALREADY_ACCEPTED
    )
    assert transition(S.RESEARCH_READY, EditionEvent.REOPEN).state is S.NEEDS_REVIEW
    assert transition(S.SEARCH_READY, EditionEvent.REOPEN).code is TransitionCode.NOT_ACCEPTED
    flagged = transition(S.RESEARCH_READY, EditionEvent.CHANGED)  # only a person unfreezes
    assert flagged.state is S.RESEARCH_READY and flagged.code is TransitionCode.FLAGGED
    assert not flagged.refused
    assert transition(S.NEEDS_REVIEW, EditionEvent.CHANGED).state is S.NEEDS_REVIEW
    cleared = transition(S.RESEARCH_READY, EditionEvent.ACCEPT, Facts(captured=3, flagged=True))
    assert cleared.code is TransitionCode.CLEARED and cleared.state is S.RESEARCH_READY
    assert transition(S.IN_PROGRESS, EditionEvent.CHANGED).code is TransitionCode.UNCHANGED
    assert S.RESEARCH_READY.frozen and not any(s.frozen for s in S if s is not S.RESEARCH_READY)
