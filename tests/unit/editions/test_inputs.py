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
