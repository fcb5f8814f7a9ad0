"""Retention policy: how many verified copies, on which destinations, how runs behave.

The library default lives in ``settings`` under ``retention.default``; a collection may
override ``copies``, ``destinations`` and ``max_age_seconds`` (its ``policy_*`` columns,
None meaning "use the default"; a collection's own "any destination" is stored as
:data:`ANY_DESTINATION`, so a default set later does not replace it). Batch size and
parallelism are library-wide: they describe how runs use the machine, not what a
collection needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import asdict, dataclass, replace
from enum import Enum
from typing import Any, Final

from sqlalchemy import select

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.store.models import Collection, Destination, Setting
from archiver_app.validation import validate_slug

SETTING_KEY = "retention.default"  # the key the GUI settings dialog edits too
#: A collection's ``policy_destinations`` when it allows any destination of its own accord
#: (a JSON string, never a list of labels); SQL NULL means "the library default's".
ANY_DESTINATION: Final = "any"


class Inherit(Enum):
    """``set_policy(destinations=INHERIT)``: the collection follows the library default."""

    INHERIT = "inherit"


INHERIT: Final = Inherit.INHERIT


@dataclass(frozen=True)
class Policy:
    """One effective retention policy.

    ``copies`` counts the laptop's own copy: 2 means the laptop plus one drive.
    ``destinations`` is a tuple of labels, or None for "any destination".
    """

    copies: int = 2
    destinations: tuple[str, ...] | None = None
    max_age_seconds: int = 3600  # an ``ongoing`` copy older than this counts as missing
    batch_size: int = 200
    parallelism: int = 2

    def allows(self, label: str) -> bool:
        return self.destinations is None or label in self.destinations

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["destinations"] = list(self.destinations) if self.destinations is not None else None
        return data


def _check_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InputError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _from_json(data: Any) -> Policy:
    base = Policy()
    if not isinstance(data, dict):
        return base
    dests = data.get("destinations")
    return Policy(
        copies=int(data.get("copies", base.copies)),
        destinations=tuple(str(d) for d in dests) if isinstance(dests, list) else None,
        max_age_seconds=int(data.get("max_age_seconds", base.max_age_seconds)),
        batch_size=int(data.get("batch_size", base.batch_size)),
        parallelism=int(data.get("parallelism", base.parallelism)),
    )


@dataclass(frozen=True)
class CopyRule:
    """What a file's policy asks of it, against the drives in use: ``copies`` in all,
    counting this computer's, of which a drive's counts only if it is in ``allowed``.

    The one rule of "enough copies": the mirror plan applies it to each file, the status
    figures (files safe / at risk) to each group of files alike.
    """

    policy: Policy
    allowed: frozenset[int]  # ids of the drives in use the policy allows

    def short_by(self, here: bool, held_on: Set[int]) -> int:
        """How many copies a file lacks (0 or less: none): ``here``, its copy on this
        computer is present; ``held_on``, the drives holding a present copy of it."""
        return self.policy.copies - here - (len(held_on & self.allowed) if held_on else 0)


class CopyRules:
    """The :class:`CopyRule` of each collection, worked out once per collection.

    Args:
        policies: :func:`collection_policies`.
        drives: the label of each drive in use (retired drives' copies do not count).
    """

    def __init__(
        self, policies: Mapping[int, Policy], default: Policy, drives: Mapping[int, str]
    ) -> None:
        self.policies = policies
        self.default = default
        self.drives = drives
        self._rules: dict[int | None, CopyRule] = {}

    def of(self, collection_id: int | None) -> CopyRule:
        rule = self._rules.get(collection_id)
        if rule is None:
            pol = self.policies.get(collection_id, self.default) if collection_id else self.default
            allowed = frozenset(i for i, label in self.drives.items() if pol.allows(label))
            rule = self._rules[collection_id] = CopyRule(pol, allowed)
        return rule


def library_policy(lib: Library) -> Policy:
    with lib.session() as s:
        row = s.get(Setting, SETTING_KEY)
        return _from_json(row.value if row else None)


def collection_policies(lib: Library) -> dict[int, Policy]:
    """The effective policy of every collection, by collection id."""
    default = library_policy(lib)
    with lib.session() as s:
        rows = s.execute(
            select(
                Collection.id,
                Collection.policy_copies,
                Collection.policy_destinations,
                Collection.policy_max_age_seconds,
            )
        ).all()
    result = {}
    for cid, copies, dests, max_age in rows:
        result[cid] = replace(
            default,
            copies=copies if copies is not None else default.copies,
            destinations=(
                default.destinations
                if dests is None
                else None
                if dests == ANY_DESTINATION
                else tuple(dests)
            ),
            max_age_seconds=max_age if max_age is not None else default.max_age_seconds,
        )
    return result


def shortfall(lib: Library, policy: Policy) -> str | None:
    """Why ``policy`` cannot be met with the drives it allows (this computer holds one copy
    and each allowed drive one), or None when it can."""
    with lib.session() as s:
        labels = sorted(s.scalars(select(Destination.label).where(Destination.enabled.is_(True))))
    allowed = [label for label in labels if policy.allows(label)]
    if policy.copies <= 1 + len(allowed):
        return None
    held = "this computer" + (f" and {', '.join(allowed)}" if allowed else "")
    return (
        f"cannot be met: it asks for {policy.copies} copies and only {held} may hold one; "
        "add a drive (archiver drives add) and allow it, or lower --copies"
    )


def effective_policy(lib: Library, collection: str | None = None) -> Policy:
    if collection is None:
        return library_policy(lib)
    slug = validate_slug(collection)
    with lib.session() as s:
        cid = s.scalar(select(Collection.id).where(Collection.slug == slug))
    if cid is None:
        raise InputError(f"no collection named {slug!r}")
    return collection_policies(lib)[cid]


_UNSET: Any = object()


def set_policy(
    lib: Library,
    *,
    collection: str | None = None,
    copies: int | None = None,
    destinations: Sequence[str] | Inherit | None = _UNSET,
    max_age_seconds: int | None = None,
    batch_size: int | None = None,
    parallelism: int | None = None,
) -> Policy:
    """Change the library default (or one collection's override); returns the new policy.

    ``destinations=None`` means "any destination" (for a collection too: a default set
    later does not change it); :data:`INHERIT` gives a collection the library default's
    back; leave it out to keep the current value.

    Raises:
        InputError: a value is out of range, a label or collection is unknown.
    """
    if copies is not None:
        _check_range("copies", copies, 1, 20)
    if max_age_seconds is not None:
        _check_range("max age (seconds)", max_age_seconds, 60, 10 * 365 * 86400)
    if batch_size is not None:
        _check_range("batch size", batch_size, 1, 100_000)
    if parallelism is not None:
        _check_range("parallelism", parallelism, 1, 64)
    with lib.write() as s:
        if destinations is INHERIT and collection is None:
            raise InputError(
                "only a collection inherits its destinations (from the library default)"
            )
        if isinstance(destinations, Sequence):
            known = set(s.scalars(select(Destination.label)).all())
            unknown = [d for d in destinations if d not in known]
            if unknown:
                raise InputError(
                    f"unknown destination(s) {', '.join(map(repr, unknown))}; "
                    f"known: {', '.join(sorted(known)) or 'none'}"
                )
        if collection is not None:
            if batch_size is not None or parallelism is not None:
                raise InputError("batch size and parallelism are set for the whole library")
            slug = validate_slug(collection)
            coll = s.scalar(select(Collection).where(Collection.slug == slug))
            if coll is None:
                raise InputError(f"no collection named {slug!r}")
            if copies is not None:
                coll.policy_copies = copies
            if destinations is INHERIT:
                coll.policy_destinations = None
            elif destinations is None:
                coll.policy_destinations = ANY_DESTINATION
            elif destinations is not _UNSET:
                coll.policy_destinations = list(destinations)
            if max_age_seconds is not None:
                coll.policy_max_age_seconds = max_age_seconds
        else:
            row = s.get(Setting, SETTING_KEY)
            current = _from_json(row.value if row else None)
            new = replace(
                current,
                copies=copies if copies is not None else current.copies,
                destinations=(
                    current.destinations
                    if destinations is _UNSET
                    else (tuple(destinations) if isinstance(destinations, Sequence) else None)
                ),
                max_age_seconds=max_age_seconds or current.max_age_seconds,
                batch_size=batch_size or current.batch_size,
                parallelism=parallelism or current.parallelism,
            )
            if row is None:
                s.add(Setting(key=SETTING_KEY, value=new.to_json()))
            else:
                row.value = new.to_json()
    return effective_policy(lib, collection)
