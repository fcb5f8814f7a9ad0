"""Bad input to editions is refused with a clear message and nothing written."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from archiver_app.editions.service import period_of
from archiver_app.errors import InputError
from archiver_app.library import Library


def test_periods() -> None:
    assert period_of(2026) == (datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    start, end = period_of(start=date(2026, 3, 1), end=date(2026, 3, 31))
    assert (start.day, end.month, end.day) == (1, 4, 1)  # the last day is included
    with pytest.raises(InputError, match="before it starts"):
        period_of(start=date(2026, 3, 2), end=date(2026, 3, 1))
    with pytest.raises(InputError, match="not both"):
        period_of(2026, start=date(2026, 3, 2))
    with pytest.raises(InputError, match="give a year"):
        period_of(start=date(2026, 3, 2))


def test_bad_names_lists_and_collections_are_refused(library: Library) -> None:
    library.ensure_collection("rivers")
    eds = library.editions
    with pytest.raises(InputError, match="invalid edition name"):
        eds.create("rivers", "../escape", year=2026)
    with pytest.raises(InputError, match="no collection 'lakes'"):
        eds.create("lakes", "e", year=2026)
    with pytest.raises(InputError, match="line 2") as caught:
        eds.create("rivers", "e", year=2026, targets_text="https://ok.example/\nnot a url\n")
    assert "nothing was created" in caught.value.message
    assert eds.list() == []
    eds.create("rivers", "e", year=2026)
    with pytest.raises(InputError, match="exists already"):
        eds.create("rivers", "e", year=2025)
    with pytest.raises(InputError, match="no edition 'f'"):
        eds.get("f")
    assert [e.name for e in eds.list("rivers")] == ["e"]


def test_a_target_typed_readable_is_kept_in_the_stored_form(library: Library) -> None:
    library.ensure_collection("rivers")
    typed = "https://Bücher.example/мир?q=é"
    library.editions.create("rivers", "e", year=2026, targets_text=typed + "\n")
    urls = [t.url for t in library.editions.coverage("e").targets]
    assert urls == ["https://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80?q=%C3%A9"]


def test_a_name_cite_would_read_as_a_capture_is_refused(library: Library) -> None:
    """``edition create misc 2`` was accepted, then ``archiver cite 2`` cited capture 2: a
    capture's id or uid is looked up before an edition's name."""
    from tests.helpers.archive import ArchiveWriter

    w = ArchiveWriter(library, "collections/rivers/2026/03/c/capture.warc.gz")
    at = datetime(2026, 3, 2, tzinfo=UTC)
    w.response("https://river.example/", "<title>River</title>", at=at, page=True)
    w.commit(collection="rivers")
    with library.session() as s:
        from archiver_app.store.models import Snapshot

        uid = s.query(Snapshot.uid).scalar()
    eds = library.editions
    for name, why in (
        ("2", "a number is a capture's id"),
        ("20261129T160117Z-aaf406b419dd5aff", "it has the form of a capture's uid"),
        (uid, "it has the form of a capture's uid"),
    ):
        with pytest.raises(InputError, match="invalid edition name") as caught:
            eds.create("rivers", name, year=2026)
        assert why in str(caught.value) and "looks captures up first" in str(caught.value)
    # any uid a capture has, whatever its form (an imported folder's)
    with library.write() as s:
        s.query(Snapshot).update({"uid": "river-page"})
    with pytest.raises(InputError, match="it is the uid of capture"):
        eds.create("rivers", "river-page", year=2026)
    assert eds.list() == []
    eds.create("rivers", "rivers-2026", year=2026)  # a name with letters is fine
