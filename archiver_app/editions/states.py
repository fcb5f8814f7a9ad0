"""An edition's lifecycle, and the one function that decides every move in it.

HealthArchive's edition lifecycle::

    planned -> in_progress -> search_ready -> research_ready (+ flagged: a damaged copy)
                                   ^               |  (reopened by a person)
                                   |               v
                                   +-------- needs_review

* ``planned``: nothing of it captured yet; ``in_progress``: captures are queued or not yet
  indexed for search; ``search_ready``: no capture pending and every captured member is in
  the full-text index.
* ``research_ready``: a person reviewed the coverage and accepted it, each gap with a
  reason. Its membership is frozen. Verify finding a member's file or copy damaged *flags*
  it for review (``Facts.flagged``): it stays accepted and frozen, since only a person
  unfreezes an edition; accepting it again clears the flag.
* ``needs_review``: a person reopened it. Membership follows the library again until it is
  accepted anew (a member deleted or damaged meanwhile is noted).

:func:`transition` is the only place that decides a state; everything else asks it and
stores what it answers. A refusal is a value with a code and a message, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from archiver_app.units import counted
from archiver_app.urls import display_url


class EditionState(StrEnum):
    PLANNED = "planned"
    IN_PROGRESS = "in_progress"
    SEARCH_READY = "search_ready"
    RESEARCH_READY = "research_ready"
    NEEDS_REVIEW = "needs_review"

    @property
    def frozen(self) -> bool:
        """Is the membership fixed (deletion and offload of members refused)?"""
        return self is EditionState.RESEARCH_READY


class TargetState(StrEnum):
    """What became of one intended URL."""

    CAPTURED = "captured"  # a member capture represents it
    FAILED = "failed"  # a job tried it and spent every attempt
    PENDING = "pending"  # queued in a job that has not reached it yet
    MISSING = "missing"  # intended, never captured (an imported list, a lost capture)
    EXCLUDED = "excluded"  # every job that saw it excluded it by a rule

    @property
    def is_gap(self) -> bool:
        return self in GAP_STATES


GAP_STATES = frozenset({TargetState.FAILED, TargetState.PENDING, TargetState.MISSING})


class EditionEvent(StrEnum):
    PROGRESS = "progress"  # the ledger was refreshed: recompute the automatic state
    ACCEPT = "accept"  # a person accepts the coverage
    REOPEN = "reopen"  # a person reopens an accepted edition
    CHANGED = "changed"  # a member was deleted (reopened) or a copy found damaged


class TransitionCode(StrEnum):
    MOVED = "moved"
    UNCHANGED = "unchanged"
    NOT_READY = "not_ready"  # accept: captures pending or not indexed
    UNEXPLAINED_GAPS = "unexplained_gaps"  # accept: gaps without a reason
    NOTHING_CAPTURED = "nothing_captured"  # accept: an edition of nothing
    FLAGGED = "flagged"  # changed: accepted and still frozen, flagged for review
    CLEARED = "cleared"  # accept: a flagged accepted edition was reviewed, the flag cleared
    ALREADY_ACCEPTED = "already_accepted"
    NOT_ACCEPTED = "not_accepted"  # reopen: only an accepted edition reopens
    MEMBERS_CHANGED = "members_changed"  # accept: members changed since the reviewer looked

    @property
    def refused(self) -> bool:
        return self not in _DONE


_DONE = frozenset(
    {TransitionCode.MOVED, TransitionCode.UNCHANGED, TransitionCode.FLAGGED, TransitionCode.CLEARED}
)


@dataclass(frozen=True)
class MemberChange:
    """A URL whose member (the capture standing for it) is not the one it was."""

    url: str
    before: int | None  # a capture id; None: no member
    after: int | None

    def __str__(self) -> str:
        was = f"capture {self.before}" if self.before is not None else "none"
        now = f"capture {self.after}" if self.after is not None else "none"
        return f"{display_url(self.url)}: {was} -> {now}"  # for people: its readable form


@dataclass(frozen=True)
class Facts:
    """What the ledger (and, for ``flagged``, the edition) says, as far as the lifecycle
    cares."""

    captured: int = 0
    attempted: int = 0  # captured + failed: has any job reached any target yet?
    pending: int = 0
    unindexed: int = 0  # captured members not in the full-text index
    unexplained: tuple[str, ...] = ()  # URLs of gaps without a reason
    flagged: bool = False  # accepted, and a damaged copy was found since
    changed: tuple[MemberChange, ...] = ()  # accept: members not the ones the reviewer saw


@dataclass(frozen=True)
class Transition:
    code: TransitionCode
    state: EditionState  # the state after the event (the old one when refused)
    message: str
    unexplained: tuple[str, ...] = ()
    #: accept refused: the members that changed since the reviewer looked; reopen: the
    #: members the library's newer (or fewer) captures changed
    changed: tuple[MemberChange, ...] = ()

    @property
    def refused(self) -> bool:
        return self.code.refused


def is_flagged(state: EditionState, review_note: str | None) -> bool:
    """Is an edition flagged for review: accepted, with a note of a damaged copy found since?
    (Accepting clears the note, so an accepted edition's note is always such an alarm.)"""
    return state is EditionState.RESEARCH_READY and review_note is not None


def _progress_state(facts: Facts) -> EditionState:
    if facts.pending == 0 and facts.unindexed == 0 and facts.captured > 0:
        return EditionState.SEARCH_READY
    if facts.attempted == 0 and facts.pending == 0:
        return EditionState.PLANNED
    return EditionState.IN_PROGRESS


def _accept(state: EditionState, facts: Facts) -> Transition:
    if state is EditionState.RESEARCH_READY:
        if facts.flagged:
            return Transition(TransitionCode.CLEARED, state, "reviewed: the flag is cleared")
        return Transition(TransitionCode.ALREADY_ACCEPTED, state, "it is already accepted")
    if facts.captured == 0:
        return Transition(TransitionCode.NOTHING_CAPTURED, state, "nothing in it is captured")
    if facts.pending or facts.unindexed:
        parts = []
        if facts.pending:
            parts.append(f"still queued for capture: {counted(facts.pending, 'URL')}")
        if facts.unindexed:
            parts.append(f"not indexed for search yet: {counted(facts.unindexed, 'capture')}")
        return Transition(TransitionCode.NOT_READY, state, "; ".join(parts))
    if facts.changed:
        return Transition(
            TransitionCode.MEMBERS_CHANGED,
            state,
            f"{counted(len(facts.changed), 'member')} changed since you looked: review them again",
            changed=facts.changed,
        )
    if facts.unexplained:
        n = len(facts.unexplained)
        what = "1 gap has no reason" if n == 1 else f"{n} gaps have no reason"
        return Transition(
            TransitionCode.UNEXPLAINED_GAPS,
            state,
            f"{what}: give each gap a reason, or capture it",
            facts.unexplained,
        )
    return Transition(TransitionCode.MOVED, EditionState.RESEARCH_READY, "accepted")


def transition(state: EditionState, event: EditionEvent, facts: Facts = Facts()) -> Transition:
    """Where ``event`` takes an edition in ``state``, or why it is refused."""
    if event is EditionEvent.ACCEPT:
        return _accept(state, facts)
    if event is EditionEvent.REOPEN:
        if state is not EditionState.RESEARCH_READY:
            return Transition(
                TransitionCode.NOT_ACCEPTED, state, f"it is {state.value}, not accepted"
            )
        return Transition(TransitionCode.MOVED, EditionState.NEEDS_REVIEW, "reopened")
    if event is EditionEvent.CHANGED:
        if state is EditionState.RESEARCH_READY:  # only a person unfreezes it
            return Transition(TransitionCode.FLAGGED, state, "flagged for review, still frozen")
        if state is EditionState.NEEDS_REVIEW:
            return Transition(TransitionCode.UNCHANGED, state, "needs review")
        return Transition(TransitionCode.UNCHANGED, state, "not accepted: nothing to review")
    # PROGRESS: accepted and reopened editions keep their state until a person acts.
    if state in {EditionState.RESEARCH_READY, EditionState.NEEDS_REVIEW}:
        return Transition(TransitionCode.UNCHANGED, state, state.value)
    new = _progress_state(facts)
    code = TransitionCode.UNCHANGED if new is state else TransitionCode.MOVED
    return Transition(code, new, new.value)
