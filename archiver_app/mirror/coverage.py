"""Files safe and at risk: how many files have the copies their policy asks for.

Each file is judged by its collection's :class:`~archiver_app.mirror.policy.CopyRule`, the
rule the mirror plan applies, so ``archiver drives``, ``archiver info`` and the status bar
agree with ``archiver mirror``. It is one aggregate query: files grouped by collection,
whether this computer holds them, and the set of drives holding a present copy (a handful
of groups, however many files); the rule is then applied to each group, not to each file.
A drive mounted without this library's folder holds no copy that counts: its copies
cannot be read (:func:`~archiver_app.mirror.destinations.drives_without_folder`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import String, case, cast, func, select

from archiver_app.library import Library
from archiver_app.mirror.destinations import drives_without_folder
from archiver_app.mirror.policy import CopyRules, Policy, collection_policies, library_policy
from archiver_app.mirror.unattached import collection_by_folder
from archiver_app.store.models import (
    Collection,
    Copy,
    CopyState,
    Destination,
    File,
    LocalState,
    Snapshot,
)
from archiver_app.units import counted

#: Collections named one by one in :attr:`Coverage.wanted`; past that, "and N more".
NAMED = 4


@dataclass(frozen=True)
class Coverage:
    safe: int  # files with the copies their policy asks for
    at_risk: int  # files below their policy
    #: what the files are compared against, in words: "the policy wants 2 copies of each,
    #: counting this computer's", or each collection's policy where they differ
    wanted: str
    default_copies: int  # the library default's ``copies``


def _wants(policy: Policy, each: str = "") -> str:
    where = f" (on {', '.join(policy.destinations)})" if policy.destinations is not None else ""
    return counted(policy.copies, "copy", "copies") + each + where


def _wanted(default: Policy, ruled: dict[str, Policy], rest: bool) -> str:
    """The words for what files are compared against: ``ruled``, the collections holding
    files whose policy differs from the default; ``rest``, whether files fall under it."""
    if not ruled:
        return f"the policy wants {_wants(default, ' of each')}, counting this computer's"
    named = [f"{slug} {_wants(p)}" for slug, p in sorted(ruled.items())[:NAMED]]
    if len(ruled) > NAMED:
        named.append(f"{len(ruled) - NAMED} more (archiver policy)")
    if rest:
        named.append(f"the rest {_wants(default)}")
    return f"each against its collection's policy: {', '.join(named)}; counting this computer's"


def policy_coverage(lib: Library) -> Coverage:
    """How many files have the copies their collection's policy asks for, and how many not."""
    default = library_policy(lib)
    policies = collection_policies(lib)
    unreadable = drives_without_folder(lib)
    # each file: its snapshot, whether this computer holds it, the drives holding a present
    # copy, e.g. "1,3" in any order (a file's other columns depend on its id: valid SQL on
    # PostgreSQL too); then the files counted by those three
    per_file = (
        select(
            File.snapshot_id,
            # a file no capture holds is counted alone, under its folder's collection
            case((File.snapshot_id.is_(None), File.id)).label("loose"),
            (File.local_state == LocalState.PRESENT).label("here"),
            func.aggregate_strings(cast(Copy.destination_id, String), ",").label("held"),
        )
        .outerjoin(Copy, (Copy.file_id == File.id) & (Copy.state == CopyState.PRESENT))
        .group_by(File.id)
        .subquery()
    )
    if default.destinations is None and all(
        (p.copies, p.destinations) == (default.copies, None) for p in policies.values()
    ):  # one rule for every file: counted by copies alone, as fast as before policies
        return _uniform(lib, default, unreadable)
    with lib.session() as s:
        drives = dict(
            s.execute(
                select(Destination.id, Destination.label).where(Destination.enabled.is_(True))
            ).all()
        )
        slugs = dict(s.execute(select(Collection.id, Collection.slug)).all())
        by_folder = collection_by_folder(s)
        groups = s.execute(
            select(
                Snapshot.collection_id,
                per_file.c.loose,
                per_file.c.here,
                per_file.c.held,
                func.count(),
            )
            .select_from(per_file)
            .outerjoin(Snapshot, Snapshot.id == per_file.c.snapshot_id)
            .group_by(Snapshot.collection_id, per_file.c.loose, per_file.c.here, per_file.c.held)
        ).all()
    rules = CopyRules(policies, default, drives)
    safe = at_risk = 0
    ruled: dict[str, Policy] = {}
    rest = False
    for of_snapshot, loose, present_here, on, n in groups:
        cid = by_folder.get(loose) if of_snapshot is None and loose is not None else of_snapshot
        rule = rules.of(cid)
        held_on = frozenset(int(d) for d in on.split(",")) - unreadable if on else frozenset()
        if rule.short_by(bool(present_here), held_on) > 0:
            at_risk += n
        else:
            safe += n
        pol = rule.policy
        if (pol.copies, pol.destinations) == (default.copies, default.destinations):
            rest = True
        elif cid is not None:  # (no collection: the default's policy, above)
            ruled[slugs.get(cid, str(cid))] = pol
    return Coverage(safe, at_risk, _wanted(default, ruled, rest), default.copies)


def _uniform(lib: Library, default: Policy, unreadable: frozenset[int]) -> Coverage:
    """:func:`policy_coverage` when every file has the default policy, on any drive: each
    file's present copies on the drives in use (but the ``unreadable`` ones) counted (only
    files that have some: one pass over the copies), the others by whether this computer
    holds them."""
    on_drives = (
        select((File.local_state == LocalState.PRESENT).label("here"), func.count().label("n"))
        .select_from(Copy)
        .join(File, File.id == Copy.file_id)
        .join(Destination, Destination.id == Copy.destination_id)
        .where(
            Copy.state == CopyState.PRESENT,
            Destination.enabled.is_(True),
            Destination.id.not_in(sorted(unreadable)),
        )
        .group_by(File.id)  # (its key: PostgreSQL reads the file's state through it)
        .subquery()
    )
    with lib.session() as s:
        held = s.execute(
            select(on_drives.c.here, on_drives.c.n, func.count()).group_by(
                on_drives.c.here, on_drives.c.n
            )
        ).all()
        by_here: dict[bool, int] = {}
        for state, count in s.execute(
            select(File.local_state, func.count()).group_by(File.local_state)
        ).all():
            here = state == LocalState.PRESENT
            by_here[here] = by_here.get(here, 0) + int(count)
    groups = [(bool(here), int(n), int(count)) for here, n, count in held]
    for here in (True, False):  # files no drive in use holds
        rest = by_here.get(here, 0) - sum(c for h, _, c in groups if h == here)
        groups.append((here, 0, rest))
    safe = sum(c for here, n, c in groups if default.copies - here - n <= 0)
    total = sum(c for _, _, c in groups)
    return Coverage(safe, total - safe, _wanted(default, {}, True), default.copies)
