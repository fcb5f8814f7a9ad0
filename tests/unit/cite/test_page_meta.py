"""What a page declares for its citation: JSON-LD references, its publisher, its dates."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from archiver_app.cite.metadata import page_meta

# What WordPress's Yoast SEO writes: the article names its author and publisher by @id.
YOAST: dict[str, Any] = {
    "@context": "https://schema.org",
    "@graph": [
        {
            "@type": "Article",
            "@id": "https://bay.example/ferry/#article",
            "author": {"name": "Maria de la Mar", "@id": "https://bay.example/#/schema/person/a"},
            "headline": "Ferry timetable",
            "datePublished": "2025-12-01T08:00:00+00:00",
            "publisher": {"@id": "https://bay.example/#organization"},
        },
        {"@type": "WebPage", "@id": "https://bay.example/ferry/", "name": "Ferry timetable"},
        {"@type": "WebSite", "@id": "https://bay.example/#website", "name": "Bay"},
        {"@type": "Organization", "@id": "https://bay.example/#organization", "name": "Bay News"},
        {"@type": "Person", "@id": "https://bay.example/#/schema/person/a", "name": "M. Mar"},
        {"@type": "Person", "@id": "https://bay.example/#/schema/person/b", "name": "Ali Quay"},
    ],
}


def _ld(data: object, head: str = "") -> str:
    script = f'<script type="application/ld+json">{json.dumps(data)}</script>'
    return f"<html><head>{head}{script}</head><body></body></html>"


def test_json_ld_authors_and_publisher_given_by_id_are_resolved() -> None:
    yoast = copy.deepcopy(YOAST)
    meta = page_meta(_ld(yoast))  # the author's name is the article's own
    assert [a.natural() for a in meta.authors] == ["Maria de la Mar"]
    article = yoast["@graph"][0]
    article["author"] = {"@id": "https://bay.example/#/schema/person/b"}
    meta = page_meta(_ld(yoast))
    assert [a.csl() for a in meta.authors] == [{"family": "Quay", "given": "Ali"}]
    assert (meta.site_name, meta.issued) == ("Bay News", (2025, 12, 1))
    # a list of references, and one to nothing the page has (passed over)
    article["author"] = [
        {"@id": "https://bay.example/#/schema/person/b"},
        {"@id": "https://bay.example/#/schema/person/zzz"},
    ]
    assert [a.natural() for a in page_meta(_ld(yoast)).authors] == ["Ali Quay"]
    for odd in ({"@id": ["x"]}, {"@id": {"a": 1}}, [[{"@id": "x"}]], {"@id": None}):
        article["author"] = odd  # not a reference to anything: no author, no error
        assert page_meta(_ld(yoast)).authors == ()
    # a site name the page declares otherwise comes first
    site = '<meta property="og:site_name" content="The Bay Paper">'
    assert page_meta(_ld(yoast, site)).site_name == "The Bay Paper"


def test_a_json_ld_publisher_names_the_site() -> None:
    data = {
        "@type": "NewsArticle",
        "author": [{"@type": "Person", "name": "Élodie Dupré"}],
        "datePublished": "2019-11-05",
        "publisher": {"@type": "Organization", "name": "Le  Journal"},
    }
    assert page_meta(_ld(data)).site_name == "Le Journal"
    data["publisher"] = "Le Monde"
    assert page_meta(_ld(data)).site_name == "Le Monde"


@pytest.mark.parametrize(
    ("kind", "csl"),
    [
        ("Organization", {"literal": "Harbour Watch"}),
        ("GovernmentOrganization", {"literal": "Harbour Watch"}),
        (["Thing", "NGO"], {"literal": "Harbour Watch"}),
        ("Person", {"family": "Watch", "given": "Harbour"}),
    ],
)
def test_a_json_ld_organisation_is_cited_whole(kind: object, csl: dict[str, str]) -> None:
    data = {"@type": "Article", "author": {"@type": kind, "name": "Harbour Watch"}}
    assert [a.csl() for a in page_meta(_ld(data)).authors] == [csl]


def test_a_json_ld_person_by_family_and_given_name() -> None:
    people = [
        {"@type": "Person", "familyName": "Port", "givenName": "Jane"},
        {"@type": "Person", "familyName": "王", "givenName": "小明"},
        {"@type": "Person", "familyName": "Quay"},
        {"@type": "Person", "familyName": 7},
    ]
    meta = page_meta(_ld({"@type": "Article", "author": people}))
    assert [a.csl() for a in meta.authors] == [
        {"family": "Port", "given": "Jane"},
        {"literal": "王小明"},
        {"literal": "Quay"},
    ]


@pytest.mark.parametrize(
    ("value", "issued"),
    [
        ("2021/03/15", (2021, 3, 15)),
        ("2021-03-15T10:00:00Z", (2021, 3, 15)),
        ("March 15, 2021", (2021, 3, 15)),
        ("15 March 2021", (2021, 3, 15)),
        ("Mar. 15, 2021", (2021, 3, 15)),
        ("Sept 2021", (2021, 9)),
        ("2023-13-45", None),
        ("2022-02-29", None),
        ("February 30, 2021", None),
        ("Someday 15, 2021", None),
        ("0999", None),
    ],
)
def test_dates_of_the_calendar_only(value: str, issued: tuple[int, ...] | None) -> None:
    for key in ("citation_publication_date", "article:published_time"):
        meta = page_meta(f'<html><head><meta name="{key}" content="{value}"></head></html>')
        assert meta.issued == issued, key


def test_a_json_ld_headline_is_the_title_after_highwire_and_dublin_core() -> None:
    """A title from JSON-LD was never read: as for authors and dates, it comes after
    ``citation_title`` and ``DC.title`` and before Open Graph's."""
    assert page_meta(_ld(YOAST)).title == "Ferry timetable"
    og = '<meta property="og:title" content="Ferry timetable | Bay News">'
    assert page_meta(_ld(YOAST, og)).title == "Ferry timetable"
    assert page_meta(f"<html><head>{og}</head></html>").title == "Ferry timetable | Bay News"
    for tag in ("citation_title", "DC.title"):
        declared = f'<meta name="{tag}" content="Winter ferries">'
        assert page_meta(_ld(YOAST, og + declared)).title == "Winter ferries", tag
    work = {"@type": "CreativeWork", "name": "Harbour  survey &amp; map"}  # no author, no date
    assert page_meta(_ld(work)).title == "Harbour survey & map"
    # a WebPage's name is its <title>, site name and all: not a title of its own
    assert page_meta(_ld({"@type": "WebPage", "name": "Ferries | Bay"})).title is None
    graph = {"@graph": [{"@type": "WebPage", "name": "Ferries | Bay"}, {"@type": "Article",
             "headline": "Ferries", "author": "Ali Quay"}]}  # fmt: skip
    assert page_meta(_ld(graph)).title == "Ferries"


def test_the_site_is_named_as_the_page_declares_it_for_citing() -> None:
    """``citation_publisher`` ("WHO Press") was passed over and the host cited as the site:
    Highwire Press's tags come first, then Dublin Core's publisher, then the name the site
    gives itself (og:site_name), then JSON-LD's publisher."""
    tags = [
        '<meta name="citation_publisher" content="WHO  Press">',
        '<meta name="DC.publisher" content="World Health Organization">',
        '<meta property="og:site_name" content="WHO">',
    ]
    ld = {"@type": "Report", "datePublished": "2024", "publisher": {"name": "WHO Europe"}}
    named = ["WHO Press", "World Health Organization", "WHO", "WHO Europe"]
    for i, site in enumerate(named):
        assert page_meta(_ld(ld, "".join(tags[i:]))).site_name == site
    journal = '<meta name="citation_journal_title" content="Bulletin of the WHO">'
    assert page_meta(_ld(ld, journal + "".join(tags))).site_name == "Bulletin of the WHO"
