"""Authors' names: groups whole, people split, suffixes kept, names without letter case whole;
read back from each format."""

from __future__ import annotations

from datetime import UTC, datetime

import bibtexparser
import pytest
import rispy
from bibtexparser.middlewares import SeparateCoAuthors, SplitNameParts

from archiver_app.cite import Reference, formatted, render
from archiver_app.cite.metadata import page_meta, parse_name
from archiver_app.cite.names import Name

WHEN = datetime(2026, 3, 2, 9, 30, 15, tzinfo=UTC)
STYLES = ("apa", "chicago", "mla", "ieee", "harvard-cite-them-right")


def _ref(*authors: Name, site: str = "harbour.example", language: str | None = None) -> Reference:
    return Reference(
        key="harbour20260302_1",
        title="Les crues de la Seine",
        original_url="https://harbour.example/x",
        site=site,
        captured_at=WHEN,
        archive_id="urn:archiver:lib:uid",
        version_url="urn:archiver:lib:uid",
        uid="uid",
        authors=authors,
        language=language,
    )


GROUPS = [
    "World Health Organization",
    "Associated Press",
    "BBC News",
    "Ministry of Health",
    "Procter and Gamble",
    "Johnson & Johnson",
    "Friends of the Earth",
    "The Harbour Times",
    "Université Paris Cité",
    "Acme Widgets Inc.",
    "University of Oxford, Department of Physics",
]


@pytest.mark.parametrize("text", GROUPS)
def test_a_group_is_cited_whole_in_every_format(text: str) -> None:
    name = parse_name(text)
    assert name.csl() == {"literal": text}
    r = _ref(name)
    for style in STYLES:
        entry = formatted([r], style)
        assert text in entry, (style, entry)
    [entry] = bibtexparser.parse_string(
        render([r], "bibtex"), append_middleware=[SeparateCoAuthors(), SplitNameParts()]
    ).entries
    [author] = entry["author"]  # one name, not "and Gamble, Procter" read as two
    assert author.last == ["{" + text.replace("&", r"\&") + "}"]
    [record] = rispy.loads(render([r], "ris"))
    assert record["authors"] == [text]


@pytest.mark.parametrize(
    ("text", "csl"),
    [
        ("Jane Port", {"family": "Port", "given": "Jane"}),
        ("Port, Jane", {"family": "Port", "given": "Jane"}),
        ("Post, Emily", {"family": "Post", "given": "Emily"}),  # "Post, " is a person's
        ("Mary Ann Evans", {"family": "Evans", "given": "Mary Ann"}),
        ("Иван Петров", {"family": "Петров", "given": "Иван"}),  # Cyrillic has initials
        (
            "Ludwig van Beethoven",
            {"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"},
        ),
        (
            "van der Berg, Anna",
            {"family": "Berg", "given": "Anna", "non-dropping-particle": "van der"},
        ),
        ("Martin Luther King Jr.", {"family": "King", "given": "Martin Luther", "suffix": "Jr."}),
        ("Martin Luther King, Jr.", {"family": "King", "given": "Martin Luther", "suffix": "Jr."}),
        ("King, Martin Luther, Jr.", {"family": "King", "given": "Martin Luther", "suffix": "Jr."}),
        ("King Jr., Martin Luther", {"family": "King", "given": "Martin Luther", "suffix": "Jr."}),
        ("John Smith III", {"family": "Smith", "given": "John", "suffix": "III"}),
    ],
)
def test_people_are_split(text: str, csl: dict[str, str]) -> None:
    assert parse_name(text).csl() == csl


def test_a_suffix_stays_with_its_person_in_every_format() -> None:
    r = _ref(parse_name("Martin Luther King Jr."))
    assert formatted([r], "apa").startswith("King, M. L., Jr. (n.d.).")
    assert formatted([r], "mla").startswith("King, Martin Luther, Jr. ")
    [entry] = bibtexparser.parse_string(
        render([r], "bibtex"), append_middleware=[SeparateCoAuthors(), SplitNameParts()]
    ).entries
    [author] = entry["author"]
    assert (author.last, author.jr, author.first) == (["King"], ["Jr."], ["Martin", "Luther"])
    [record] = rispy.loads(render([r], "ris"))
    assert record["authors"] == ["King, Martin Luther, Jr."]
    assert parse_name("Martin Luther King Jr.").natural() == "Martin Luther King Jr."


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("محمد علي", "محمد علي"),
        ("علي, محمد", "محمد علي"),  # written given name first
        ("王, 小明", "王小明"),  # written family name first, without a space
        ("王 小明", "王 小明"),
        ("דוד כהן", "דוד כהן"),
        ("山田太郎", "山田太郎"),
    ],
)
def test_a_name_without_letter_case_is_cited_whole(text: str, whole: str) -> None:
    name = parse_name(text)
    assert name.csl() == {"literal": whole}
    for style in STYLES:  # citeproc-py made initials of them: "علي, . محمد ."
        entry = formatted([_ref(name)], style)
        assert whole in entry and " ." not in entry, (style, entry)


@pytest.mark.parametrize(
    ("byline", "names"),
    [
        ("Procter and Gamble", [{"literal": "Procter and Gamble"}]),
        (
            "Department of Health and Human Services",
            [{"literal": "Department of Health and Human Services"}],
        ),
        (
            "By Jane Port and Associated Press",
            [{"family": "Port", "given": "Jane"}, {"literal": "Associated Press"}],
        ),
        ("Associated Press", [{"literal": "Associated Press"}]),
    ],
)
def test_a_byline_splits_between_people_only(byline: str, names: list[dict[str, str]]) -> None:
    meta = page_meta(f'<html><head><meta name="author" content="{byline}"></head></html>')
    assert [a.csl() for a in meta.authors] == names


def test_a_site_with_an_address_for_a_name_is_not_mangled() -> None:
    # a numeric style's number is set apart; an address at the start of an entry is not
    r = _ref(site="127.0.0.1")
    assert formatted([r], "apa").startswith("127.0.0.1. (n.d.). Les crues de la Seine.")
    assert formatted([r], "chicago").startswith("127.0.0.1. n.d. “Les Crues De La Seine.”")
    assert formatted([r], "mla").startswith("“Les Crues De La Seine.” 127.0.0.1, Archiver, ")
    assert formatted([r], "harvard-cite-them-right").startswith("127.0.0.1 (no date)")
    assert formatted([r], "ieee").startswith("[1] 127.0.0.1, ")


def test_only_english_titles_are_title_cased() -> None:
    for language in ("fr", "fr-CA"):
        r = _ref(parse_name("Élodie Dupré"), language=language)
        assert "“Les crues de la Seine.”" in formatted([r], "chicago")
        assert "“Les crues de la Seine.”" in formatted([r], "mla")
        [record] = rispy.loads(render([r], "ris"))
        assert record["language"] == language
    english = _ref(parse_name("Élodie Dupré"), language="en")
    assert "“Les Crues De La Seine.”" in formatted([english], "chicago")
