"""Retention policy: library default in settings, per-collection overrides, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.mirror import Policy, add_destination, effective_policy, set_policy
from archiver_app.mirror.policy import collection_policies
from archiver_app.store.models import Setting


def test_default_policy() -> None:
    p = Policy()
    assert (p.copies, p.destinations, p.batch_size, p.parallelism) == (2, None, 200, 2)
    assert p.allows("anything")


def test_set_library_and_collection(library: Library, tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        add_destination(library, tmp_path / name, name)
    library.ensure_collection("research")
    library.ensure_collection("default")
    lib_default = set_policy(library, copies=3, batch_size=50, parallelism=4)
    assert (lib_default.copies, lib_default.batch_size, lib_default.parallelism) == (3, 50, 4)
    with library.session() as s:
        stored = s.get(Setting, "retention.default")
        assert stored is not None and stored.value["copies"] == 3
    coll = set_policy(library, collection="research", copies=2, destinations=["b"])
    assert coll.copies == 2 and coll.destinations == ("b",) and coll.batch_size == 50
    assert not coll.allows("a") and coll.allows("b")
    assert effective_policy(library).copies == 3  # library default untouched
    set_policy(library, collection="research", destinations=None)
    assert effective_policy(library, "research").destinations is None
    set_policy(library, copies=4)
    assert {p.copies for p in collection_policies(library).values()} == {2, 4}
    assert effective_policy(library, "default").copies == 4


BAD_INPUT: list[tuple[dict[str, object], str]] = [
    ({"copies": 0}, "copies must be between"),
    ({"copies": 99}, "copies must be between"),
    ({"batch_size": 0}, "batch size"),
    ({"parallelism": 0}, "parallelism"),
    ({"max_age_seconds": 1}, "max age"),
    ({"destinations": ["nope"]}, "unknown destination"),
    ({"collection": "missing", "copies": 2}, "no collection named"),
    ({"collection": "Bad Slug!", "copies": 2}, "invalid collection name"),
    ({"collection": "default", "batch_size": 3}, "whole library"),
]


def test_bad_policy_input(library: Library) -> None:
    library.ensure_collection("default")
    for kwargs, message in BAD_INPUT:
        with pytest.raises(InputError, match=message):
            set_policy(library, **kwargs)  # type: ignore[arg-type]
    assert effective_policy(library) == Policy()
    assert effective_policy(library, "default") == Policy()


def test_reads_what_the_gui_settings_dialog_writes(library: Library, tmp_path: Path) -> None:
    from datetime import timedelta

    from archiver_app.mirror import list_destinations
    from archiver_app.store.models import Destination

    with library.write() as s:  # the settings dialog stores only these two
        s.add(Setting(key="retention.default", value={"copies": 3}))
        s.add(Setting(key="scrub.schedule", value={"interval_days": 7}))
    assert effective_policy(library) == Policy(copies=3)
    (tmp_path / "d").mkdir()
    add_destination(library, tmp_path / "d", "d")
    with library.write() as s:
        for row in s.query(Destination):
            row.last_scrub_at = library.clock() - timedelta(days=10)  # < 30, > 7
    assert list_destinations(library)[0].scrub_due
