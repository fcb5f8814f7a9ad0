"""An address spelled with dot segments is the address it stands for (the one a browser
asks for): it cannot make a second watch of a watched page."""

from __future__ import annotations

import pytest

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.urls import normalize_url

PAGE = "http://127.0.0.1:18473/watch/page.html"


def test_dot_segments_do_not_make_a_second_watch(library: Library) -> None:
    first = library.jobs.watch([PAGE], schedule="daily")
    with pytest.raises(InputError, match=rf"{PAGE} is watched already \(job {first}"):
        library.jobs.watch(["http://127.0.0.1:18473/watch/../watch/./page.html"], schedule="daily")
    [row] = library.jobs.watches()
    assert row.seeds == (PAGE,)


@pytest.mark.parametrize(
    ("spelled", "meant"),
    [
        ("http://h/a/./b/", "http://h/a/b/"),
        ("http://h/a/b/../../c?x=../y", "http://h/c?x=../y"),
        ("http://h/../../x", "http://h/x"),
        ("http://h/a/..", "http://h/"),
        ("http://h/a/.", "http://h/a/"),
        ("http://h/a.b/c.html", "http://h/a.b/c.html"),
    ],
)
def test_dot_segments_are_removed(spelled: str, meant: str) -> None:
    assert normalize_url(spelled) == meant
