"""The edition tables: an edition, its target ledger, its members and its explained gaps.

Registered on the shared ``Base`` (``store.models`` imports this module at its end, so the
schema test and Alembic see these tables with the rest). Migration ``0005`` creates them:
new tables only, so opening an older library stays O(1).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from archiver_app.store.models import Base
from archiver_app.store.types import utcnow


class Edition(Base):
    """A named release of one collection over ``[period_start, period_end)``."""

    __tablename__ = "editions"

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id"))
    name: Mapped[str] = mapped_column(String(200), unique=True)
    period_start: Mapped[datetime]
    period_end: Mapped[datetime]  # exclusive
    state: Mapped[str] = mapped_column(String(16))  # states.EditionState
    accepted_at: Mapped[datetime | None]
    #: Why the edition needs review (a member deleted after a reopen, a damaged copy).
    review_note: Mapped[str | None] = mapped_column(Text)
    #: Jobs queued for this edition (``capture-missing``): their captures count even when
    #: they land after the period ends.
    job_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class EditionTarget(Base):
    """One intended URL of an edition (the target ledger) and what became of it.

    ``source`` says where the intent came from (``seed``: a job's seed, ``list``: an
    imported list, ``job``: a page a job discovered and meant to capture); ``job_id`` the
    first job that knew it; ``excluded_rule`` the rule that excluded it; ``state`` a
    :class:`archiver_app.editions.states.TargetState`; ``detail`` the last error.
    """

    __tablename__ = "edition_targets"
    __table_args__ = (
        UniqueConstraint("edition_id", "url_key"),
        Index(None, "edition_id", "state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    edition_id: Mapped[int] = mapped_column(ForeignKey("editions.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)
    url_key: Mapped[str] = mapped_column(Text)
    domain: Mapped[str] = mapped_column(String(255), default="")
    source: Mapped[str] = mapped_column(String(8))
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    excluded_rule: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))
    detail: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)


class EditionMember(Base):
    """The capture that represents a target: the last good one in the period, or the one
    the user chose (``chosen_by`` ``user``). ``snapshot_id`` becomes NULL if it is deleted."""

    __tablename__ = "edition_members"
    __table_args__ = (Index(None, "snapshot_id"), Index(None, "edition_id"))

    target_id: Mapped[int] = mapped_column(
        ForeignKey("edition_targets.id", ondelete="CASCADE"), primary_key=True
    )
    edition_id: Mapped[int] = mapped_column(ForeignKey("editions.id", ondelete="CASCADE"))
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id", ondelete="SET NULL"))
    chosen_by: Mapped[str] = mapped_column(String(8), default="default")
    chosen_at: Mapped[datetime] = mapped_column(default=utcnow)


class EditionGap(Base):
    """Why an intended URL is not in the edition, as the reviewer explained it."""

    __tablename__ = "edition_gaps"
    __table_args__ = (Index(None, "edition_id"),)

    target_id: Mapped[int] = mapped_column(
        ForeignKey("edition_targets.id", ondelete="CASCADE"), primary_key=True
    )
    edition_id: Mapped[int] = mapped_column(ForeignKey("editions.id", ondelete="CASCADE"))
    reason: Mapped[str] = mapped_column(Text)
    explained_at: Mapped[datetime] = mapped_column(default=utcnow)
