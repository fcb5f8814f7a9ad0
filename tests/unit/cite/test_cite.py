"""Citations of captures, each format read back by a reference parser."""

from __future__ import annotations

import html
import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import bibtexparser
import jsonschema
import pytest
import rispy

from archiver_app import cli
from archiver_app.cite import citation, formatted, render, robust_link
from archiver_app.cite.metadata import parse_name
from archiver_app.errors import InputError
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter
from tests.unit.warc.test_htmltext import HOSTILE

TITLE = 'Tides & "currents" {at} 100% of {the} harbour'
URL = "https://www.harbour.example/notices?id=7&lang=en#top"
WHEN = datetime(2026, 3, 2, 9, 30, 15, tzinfo=UTC)

# The official CSL-JSON schema (citation-style-language/schema, vendored with its licence).
CSL_SCHEMA = json.loads(
    (Path(__file__).parents[2] / "data" / "csl" / "csl-data.json").read_text("utf-8")
)


@pytest.fixture
def capture(library: Library) -> int:
    w = ArchiveWriter(library, "collections/default/2026/03/c/capture.warc.gz")
    w.response(URL, f"<title>{TITLE}</title>", at=WHEN, page=True)
    w.commit()
    with library.write() as s:
        from archiver_app.store.models import Snapshot

        snap = s.query(Snapshot).one()
        snap.title = TITLE
        return snap.id


def test_the_record_names_original_and_archived_copy(library: Library, capture: int) -> None:
    r = citation(library, capture)
    assert (r.title, r.original_url, r.site) == (TITLE, URL, "harbour.example")
    assert r.captured_at == WHEN
    assert r.archive_id == f"urn:archiver:{library.id}:{r.uid}"
    assert citation(library, r.uid) == r  # by uid as well as by id
    served = citation(library, capture, version_base="http://127.0.0.1:8080/")
    assert served.version_url == f"http://127.0.0.1:8080/20260302093015/{URL}"
    for base in ("notaurl", "ftp://127.0.0.1/", "https://"):  # a Robust Link's data-versionurl
        with pytest.raises(InputError, match="is not a web address"):
            citation(library, capture, version_base=base)
    for missing in (9999, "²", "not-a-uid"):  # "²" is a digit but no number
        with pytest.raises(InputError, match="no capture"):
            citation(library, missing)


def test_bibtex_reads_back(library: Library, capture: int) -> None:
    text = render([citation(library, capture)], "bibtex")
    parsed = bibtexparser.parse_string(text)
    assert not parsed.failed_blocks
    [entry] = parsed.entries
    assert entry.entry_type == "online"
    fields = {f.key: f.value for f in entry.fields}
    assert fields["url"] == URL
    assert fields["urldate"] == "2026-03-02"
    assert "harbour" in fields["title"] and r"\&" in fields["title"] and r"\%" in fields["title"]
    assert fields["eprint"].startswith("urn:archiver:")
    assert "2026-03-02T09:30:15Z" in fields["note"]


def test_ris_reads_back(library: Library, capture: int) -> None:
    [record] = rispy.loads(render([citation(library, capture)], "ris"))
    assert record["type_of_reference"] == "ELEC"
    assert record["title"] == TITLE
    assert record["urls"] == [URL]
    assert record["access_date"] == "2026/03/02"
    assert record["accession_number"].startswith("urn:archiver:")


def test_csl_json_is_valid_and_processable(library: Library, capture: int) -> None:
    data = json.loads(render([citation(library, capture)], "csl-json"))
    jsonschema.Draft7Validator.check_schema(CSL_SCHEMA)
    jsonschema.validate(data, CSL_SCHEMA, cls=jsonschema.Draft7Validator)
    # The schema allows extra keys; a key it does not define is one no CSL processor reads.
    known = set(CSL_SCHEMA["items"]["properties"])
    assert set(data[0]) <= known, set(data[0]) - known
    assert data[0]["type"] == "webpage"
    assert data[0]["accessed"] == {"date-parts": [[2026, 3, 2]]}
    assert data[0]["URL"] == URL


def test_the_page_language_is_cited(library: Library, capture: int) -> None:
    from archiver_app.store.models import Snapshot

    with library.write() as s:
        snap = s.get(Snapshot, capture)
        assert snap is not None
        snap.language = "fr"
    r = citation(library, capture)
    assert r.language == "fr"
    data = json.loads(render([r], "csl-json"))
    jsonschema.validate(data, CSL_SCHEMA, cls=jsonschema.Draft7Validator)
    assert data[0]["language"] == "fr"
    assert "100% of {the} harbour.”" in formatted([r], "chicago")  # not title-cased as English
    assert "100% of {the} Harbour.”" in formatted([replace(r, language="en")], "chicago")


def test_formatted_styles(library: Library, capture: int) -> None:
    r = citation(library, capture)
    apa = formatted([r], "apa")
    assert apa.startswith('Tides & "currents" {at} 100% of {the} harbour. (n.d.).')  # no author
    assert "Retrieved March 2, 2026, from https://www.harbour.example/notices" in apa
    assert "Accessed 2 Mar. 2026" in formatted([r], "mla")
    assert "Accessed March 2, 2026" in formatted([r], "chicago")
    assert f" {r.archive_id}. Archiver." in formatted([r], "chicago")  # not "Urn:archiver"
    with pytest.raises(InputError, match="robust-link; any CSL style name"):  # names them all
        formatted([r], "no-such-style")
    # a style with no archive field still names the copy cited; numbers stand apart
    ieee = formatted([r], "ieee")
    assert ieee.startswith("[1] ") and ieee.count(r.archive_id) == 1
    assert f". Archived copy: {r.archive_id}, captured 2026-03-02T" in ieee
    harvard = formatted([r], "harvard-cite-them-right")
    assert f"Archived copy: {r.archive_id}, captured " in harvard
    assert apa.count(r.archive_id) == 1  # APA names it already: not twice
    assert f"Archived copy: {html.escape(r.archive_id)}" in formatted([r], "ieee", as_html=True)


def test_an_address_is_cited_as_it_is_written(library: Library) -> None:
    """A page without a title is cited by its address, which MLA and Chicago title-cased
    ("Https://Example.org/A-Page"); addresses inside a title keep their case too."""
    w = ArchiveWriter(library, "collections/default/2026/03/c/capture.warc.gz")
    address = "https://example.org/a-page?id=7"
    w.response(address, "<p>No title here</p>", at=WHEN, page=True)
    w.commit()
    with library.write() as s:
        from archiver_app.store.models import Snapshot

        snap = s.query(Snapshot).one()
        snap.title = None  # as a capture of a page without a title has it
    r = citation(library, snap.id)
    assert r.title == address
    copy = f"Archiver, {r.archive_id}, {address}. Accessed 2 Mar. 2026."
    # MLA cites a page without an author by its title, in quotes as any page's
    assert formatted([r], "mla") == f"“{address}.” example.org, {copy}\n"
    assert formatted([r], "mla", as_html=True) == f"“{address}.” <i>example.org</i>, {copy}\n"
    assert f"n.d. “{address}.” {r.archive_id}." in formatted([r], "chicago")
    titled = replace(
        r,
        title="the news at bbc.co.uk, www.example.org/path and (https://foo.example/X-y)",
        site="news.example.org",
        authors=(parse_name("Jane Port"),),
    )
    assert formatted([titled], "mla") == (
        "Port, Jane. “The News at bbc.co.uk, www.example.org/path and "
        f"(https://foo.example/X-y).” news.example.org, {copy}\n"
    )
    assert "“The News at bbc.co.uk, www.example.org/path and (https://foo.example/X-y).”" in (
        formatted([titled], "chicago")
    )
    assert json.loads(render([titled], "csl-json"))[0]["title"] == titled.title  # as it is


def test_formatted_references_show_an_address_as_it_reads(library: Library) -> None:
    """APA, MLA and Chicago printed ``/%D0%BC%D0%B8%D1%80/...``: a person reads the
    address as a browser's address bar shows it. Programs read BibTeX, CSL-JSON, RIS and
    Robust Links: they keep the URI as stored (ASCII)."""
    stored = "https://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html?q=a%26b"
    shown = "https://bücher.example/мир/東京.html?q=a%26b"
    sid = _page(library, stored, "<p>No title here</p>")
    with library.write() as s:
        from archiver_app.store.models import Snapshot

        snap = s.get(Snapshot, sid)
        assert snap is not None
        snap.title = None
    r = citation(library, sid, version_base="http://127.0.0.1:8080")
    assert (r.original_url, r.title, r.site) == (stored, shown, "bücher.example")
    # the archived copy's address: the original's host stays as the replay server reads it
    copy = "http://127.0.0.1:8080/20260302093015/https://xn--bcher-kva.example/мир/東京.html"
    for style in ("apa", "mla", "chicago", "ieee"):
        for as_html in (False, True):
            text = formatted([r], style, as_html=as_html)
            assert shown in text and f"{copy}?q=a%26b" in text, (style, text)
            assert "%D0" not in text, (style, text)
    assert render([r], "csl-json").count(stored) == 2  # URL and archive_location
    assert f"url = {{{stored}}}" in render([r], "bibtex")
    assert f"UR  - {stored}" in render([r], "ris")
    assert f'href="{html.escape(stored)}"' in robust_link(r)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: list[dict[str, str | None]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.attrs.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text += data


def test_robust_link_attributes(library: Library, capture: int) -> None:
    r = citation(library, capture)
    parser = _Links()
    parser.feed(robust_link(r))
    [attrs] = parser.attrs
    assert attrs["href"] == URL and attrs["data-originalurl"] == URL
    assert attrs["data-versionurl"] == r.archive_id
    assert attrs["data-versiondate"] == "2026-03-02T09:30:15Z"
    assert parser.text == TITLE


def test_a_robust_link_dates_its_copy_to_the_second_as_the_rest_of_the_citation(
    library: Library,
) -> None:
    """Two captures of one day both gave data-versiondate="2026-03-02". The Robust Links
    spec allows an ISO 8601 datetime (YYYY-MM-DDThh:mm:ssZ): the capture's time, as the note
    and a replay address give it, not the time in its uid (when the capture began)."""
    w = ArchiveWriter(library, "collections/default/2026/03/two/capture.warc.gz")
    w.response(URL, "<title>Notices</title><p>morning</p>", at=WHEN, page=True)
    w.response(URL, "<title>Notices</title><p>evening</p>", at=WHEN.replace(hour=18), page=True)
    w.commit()
    from archiver_app.store.models import Snapshot

    with library.write() as s:
        snaps = s.query(Snapshot).order_by(Snapshot.captured_at).all()
        snaps[0].uid = "20260302T093014Z-0123456789abcdef"  # named a second before its record
        ids = [snap.id for snap in snaps]
    dates = []
    for sid in ids:
        r = citation(library, sid, version_base="http://127.0.0.1:8080")
        parser = _Links()
        parser.feed(robust_link(r))
        [attrs] = parser.attrs
        dates.append(attrs["data-versiondate"])
        at = datetime.strptime(attrs["data-versiondate"], "%Y-%m-%dT%H:%M:%SZ")
        assert f"/{at:%Y%m%d%H%M%S}/" in attrs["data-versionurl"]
        assert f"captured {attrs['data-versiondate']}" in r.note(r.version_url)
    assert dates == ["2026-03-02T09:30:15Z", "2026-03-02T18:30:15Z"]


def test_the_command(library: Library, capture: int, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(library.root)
    assert cli.main(["cite", str(capture), "--format", "bibtex", "--library", root]) == 0
    assert capsys.readouterr().out.startswith("@online{harbourexample20260302_")
    assert cli.main(["cite", str(capture), "--library", root]) == 0
    assert "(n.d.)" in capsys.readouterr().out


def test_a_capture_given_twice_is_cited_once(
    library: Library, capture: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cite 1 1 --format bibtex`` wrote two entries with one key (and by id and uid)."""
    uid = citation(library, capture).uid
    for twice in ([str(capture), str(capture)], [str(capture), uid]):
        assert cli.main(["cite", *twice, "--format", "bibtex", "--library", str(library.root)]) == 0
        assert capsys.readouterr().out.count("@online{") == 1


# ---------------------------------------------------------------- the page's own metadata

ARTICLE = """<!doctype html><html><head><title>Cranes repainted | The Harbour Times</title>
<meta name="citation_title" content="Cranes repainted">
<meta name="citation_author" content="Port, Jane">
<meta name="citation_author" content="Ali  Quay">
<meta name="citation_author" content="mailto:desk@harbour.example">
<meta name="citation_publication_date" content="2026/03/04">
<meta property="og:site_name" content="The Harbour Times">
<meta name="author" content="Someone Else">
</head><body><p>Blue again.</p></body></html>"""

GRAPH = """<!doctype html><html><head><title>Ferry timetable</title>
<script type="application/ld+json">{ broken json </script>
<script type="application/ld+json">{"@graph": [{"@type": "WebSite", "name": "Bay News"},
 {"@type": ["NewsArticle"], "author": [{"@type": "Person", "name": "Maria de la Mar"},
 {"@type": "Organization", "name": "Bay News Desk"}, {"name": "https://bay.example/me"}],
 "datePublished": "2025-12-01T08:00:00Z"}]}</script>
<meta property="article:published_time" content="1999-01-01">
</head><body></body></html>"""


def _page(library: Library, url: str, html: str) -> int:
    w = ArchiveWriter(library, f"collections/default/2026/03/{abs(hash(url))}/capture.warc.gz")
    w.response(url, html, at=WHEN, page=True)
    w.commit()
    with library.session() as s:
        from archiver_app.store.models import Snapshot

        return s.query(Snapshot).filter_by(url=url).one().id


def test_a_page_that_names_its_authors_and_date_is_cited_with_them(library: Library) -> None:
    sid = _page(library, "https://harbour.example/cranes", ARTICLE)
    r = citation(library, sid)
    assert r.title == "Cranes repainted" and r.site == "The Harbour Times"
    assert [a.inverted() for a in r.authors] == ["Port, Jane", "Quay, Ali"]
    assert r.issued == (2026, 3, 4)
    assert formatted([r], "apa").startswith(
        "Port, J., & Quay, A. (2026, March 4). Cranes repainted."
    )
    # Chicago and MLA give full given names (their styles' initialize="false")
    assert formatted([r], "chicago").startswith("Port, Jane, and Ali Quay. 2026.")
    assert formatted([r], "mla").startswith("Port, Jane, and Ali Quay. “Cranes Repainted.”")
    [entry] = bibtexparser.parse_string(render([r], "bibtex")).entries
    fields = {f.key: f.value for f in entry.fields}
    assert (fields["author"], fields["date"]) == ("Port, Jane and Quay, Ali", "2026-03-04")
    assert fields["organization"] == "The Harbour Times"
    [record] = rispy.loads(render([r], "ris"))
    assert record["authors"] == ["Port, Jane", "Quay, Ali"]
    assert (record["year"], record["date"]) == ("2026", "2026/03/04/")
    data = json.loads(render([r], "csl-json"))
    jsonschema.validate(data, CSL_SCHEMA, cls=jsonschema.Draft7Validator)
    assert data[0]["author"][0] == {"family": "Port", "given": "Jane"}
    assert data[0]["issued"] == {"date-parts": [[2026, 3, 4]]}


def test_a_dated_page_is_cited_with_its_capture_date_too(library: Library) -> None:
    """The styles print the access date only for a page without a date of its own; an
    archived copy is the version of its capture date, so each carries it."""
    r = citation(library, _page(library, "https://harbour.example/cranes", ARTICLE))
    url, copy = "https://harbour.example/cranes", r.archive_id
    assert formatted([r], "apa") == (
        f"Port, J., & Quay, A. (2026, March 4). Cranes repainted. Archiver ({copy}). "
        f"The Harbour Times. Retrieved March 2, 2026, from {url}\n"
    )
    assert formatted([r], "chicago") == (
        "Port, Jane, and Ali Quay. 2026. “Cranes Repainted.” The Harbour Times, March 4. "
        f"{copy}. Archiver. Accessed March 2, 2026. {url}.\n"
    )
    assert formatted([r], "mla") == (
        "Port, Jane, and Ali Quay. “Cranes Repainted.” The Harbour Times, 4 Mar. 2026, "
        f"Archiver, {copy}, {url}. Accessed 2 Mar. 2026.\n"
    )
    assert "(Accessed: 2 March 2026)" in formatted([r], "harvard-cite-them-right")  # en-GB


def test_json_ld_authors_groups_and_particles(library: Library) -> None:
    r = citation(library, _page(library, "https://bay.example/ferry", GRAPH))
    # No title or site name declared: the snapshot's own title and the domain.
    assert (r.title, r.site) == ("Capture of https://bay.example/ferry", "bay.example")
    assert [a.csl() for a in r.authors] == [
        {"family": "Mar", "given": "Maria", "non-dropping-particle": "de la"},
        {"literal": "Bay News Desk"},
    ]
    assert r.issued == (2025, 12, 1)  # JSON-LD is read before Open Graph's date
    [entry] = bibtexparser.parse_string(render([r], "bibtex")).entries
    assert {f.key: f.value for f in entry.fields}["author"] == (
        "de la Mar, Maria and {Bay News Desk}"
    )
    assert formatted([r], "apa").startswith("de la Mar, M., & Bay News Desk. (2025, December 1).")


@pytest.mark.parametrize(
    ("head", "authors", "issued"),
    [
        (
            '<meta name="dc.creator" content="Quay, Ali"><meta name="DC.date" content="2024">',
            1,
            (2024,),
        ),
        ('<meta name="citation_date" content="2024-13-40">', 0, None),  # not even 2024
        ('<meta name="citation_date" content="2024-02-30">', 0, None),
        (
            '<meta name="citation_date" content="2023-13-45">'
            '<meta property="article:published_time" content="2023-02-01">',
            0,
            (2023, 2, 1),
        ),
        (
            '<meta name="citation_date" content="yesterday"><meta name="author" content="12">',
            0,
            None,
        ),
        ('<script type="application/ld+json">' + "[" * 100_000 + "</script>", 0, None),
        ('<script type="application/ld+json">{"@type": "Article", "author": 7}</script>', 0, None),
    ],
)
def test_metadata_that_is_not_a_name_or_a_date_is_passed_over(
    head: str, authors: int, issued: tuple[int, ...] | None
) -> None:
    from archiver_app.cite.metadata import page_meta

    meta = page_meta(f"<html><head>{head}</head><body></body></html>")
    assert (len(meta.authors), meta.issued) == (authors, issued)


@pytest.mark.parametrize(
    ("byline", "names"),
    [
        ("By Jane Port and Ali Quay", ["Port, Jane", "Quay, Ali"]),
        ("Jane Port; Ali Quay & Mary Ann Evans", ["Port, Jane", "Quay, Ali", "Evans, Mary Ann"]),
        ("Jane Port, Ali Quay", ["Port, Jane", "Quay, Ali"]),
        ("Port, Jane", ["Port, Jane"]),
        ("by Harbour Authority of the Bay Area", ["Harbour Authority of the Bay Area"]),
    ],
)
def test_a_byline_in_meta_author_names_each_author(byline: str, names: list[str]) -> None:
    from archiver_app.cite.metadata import page_meta

    meta = page_meta(f'<html><head><meta name="author" content="{byline}"></head></html>')
    assert [a.inverted() for a in meta.authors] == names


@pytest.mark.parametrize(
    ("text", "inverted"),
    [
        ("Jane Port", "Port, Jane"),
        ("Port, Jane", "Port, Jane"),
        ("Ludwig van Beethoven", "van Beethoven, Ludwig"),
        ("van Beethoven, Ludwig", "van Beethoven, Ludwig"),
        ("Mary Ann Evans", "Evans, Mary Ann"),
        ("Madonna", "Madonna"),
        ("Harbour Authority of the Bay Area", "Harbour Authority of the Bay Area"),
    ],
)
def test_names_are_split_as_reference_managers_do(text: str, inverted: str) -> None:
    from archiver_app.cite.metadata import parse_name

    assert parse_name(text).inverted() == inverted


def test_an_export_writes_its_bibliography_beside_it(
    library: Library, capture: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.store.models import Snapshot, SnapshotState

    with library.write() as s:  # a failed capture in the selection is not cited
        failed = s.get(Snapshot, _page(library, "https://harbour.example/gone", "<p>x</p>"))
        assert failed is not None
        failed.state = SnapshotState.FAILED
    root, out = str(library.root), tmp_path / "harbour.wacz"
    args = ["export", "-o", str(out), "--bibliography", "--library", root]
    assert cli.main(args) == 0
    assert f"bibliography: {tmp_path / 'harbour.bib'}" in capsys.readouterr().out
    [entry] = bibtexparser.parse_string((tmp_path / "harbour.bib").read_text("utf-8")).entries
    assert entry.key == citation(library, capture).key
    [item] = json.loads((tmp_path / "harbour.csl.json").read_text("utf-8"))
    assert item["URL"] == URL
    out.unlink()  # the export is gone but its bibliography stays: not overwritten unasked
    assert cli.main(args) == 2
    assert "harbour.bib exists already" in capsys.readouterr().err
    assert not out.exists()
    assert cli.main([*args, "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("harbour")) == [
        "harbour.bib",
        "harbour.csl.json",
        "harbour.wacz",
    ]
    (tmp_path / "harbour.bib").unlink()
    (tmp_path / "harbour.bib").mkdir()  # cannot be replaced: the export stays, and says so
    assert cli.main([*args, "--overwrite"]) == 1
    assert "the bibliography could not be written" in capsys.readouterr().err
    assert out.is_file() and (tmp_path / "harbour.bib").is_dir()


@pytest.mark.parametrize("doc", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_markup_is_read_for_metadata_in_linear_time(doc: str) -> None:
    from archiver_app.cite.metadata import page_meta

    started = time.perf_counter()  # lexbor alone took minutes on the nesting ones
    page_meta(doc)
    assert time.perf_counter() - started < 10.0


def test_a_page_on_a_drive_is_cited_with_its_metadata_when_the_drive_is_plugged_in(
    library: Library, tmp_path: Path
) -> None:
    import shutil
    import uuid

    from sqlalchemy import select

    from archiver_app.store.models import Copy, CopyState, Destination, File

    sid = _page(library, "https://harbour.example/cranes", ARTICLE)
    with library.session() as s:
        [relative] = s.scalars(select(File.path)).all()
    held = tmp_path / "drive" / "Archiver" / library.id / relative
    held.parent.mkdir(parents=True)
    shutil.move(library.root / relative, held)  # offloaded: only the drive holds it
    with library.write() as s:
        dest = Destination(uuid=str(uuid.uuid4()), label="Blue", last_mount_path=None)
        s.add(dest)
        s.flush()
        s.add(
            Copy(file_id=s.scalar(select(File.id)), destination_id=dest.id, state=CopyState.PRESENT)
        )
    unplugged = citation(library, sid)
    assert (unplugged.authors, unplugged.site) == ((), "harbour.example")
    with library.write() as s:
        s.scalars(select(Destination)).one().last_mount_path = str(tmp_path / "drive")
    plugged = citation(library, sid)
    assert [a.inverted() for a in plugged.authors] == ["Port, Jane", "Quay, Ali"]
    assert plugged.site == "The Harbour Times"


def test_the_page_is_read_for_its_citation_on_postgresql_too(
    postgres_url: str, tmp_path: Path
) -> None:
    lib = Library.open(tmp_path / "shared", create=True, database_url=postgres_url)
    try:
        r = citation(lib, _page(lib, "https://harbour.example/cranes", ARTICLE))
        assert ([a.inverted() for a in r.authors], r.issued) == (
            ["Port, Jane", "Quay, Ali"],
            (2026, 3, 4),
        )
    finally:
        lib.close()


def test_a_pdf_is_cited_with_the_author_title_and_date_of_its_document_information(
    library: Library,
) -> None:
    from tests.helpers.pdf_links import pdf_with_links

    pdf = pdf_with_links(
        [[]],
        info={
            "Title": "Harbour  crane survey",
            "Author": "Jane Port; Ali Quay",
            "CreationDate": "D:20250614093000+01'00'",
        },
    )
    w = ArchiveWriter(library, "collections/default/2026/03/pdf/capture.warc.gz")
    w.response(
        "https://harbour.example/survey.pdf", pdf, at=WHEN, mime="application/pdf", page=True
    )
    w.commit()
    with library.session() as s:
        from archiver_app.store.models import Snapshot

        sid = s.query(Snapshot).one().id
    r = citation(library, sid)
    assert r.title == "Harbour crane survey"
    assert [a.inverted() for a in r.authors] == ["Port, Jane", "Quay, Ali"]
    assert r.issued == (2025, 6, 14)
    assert formatted([r], "apa").startswith("Port, J., & Quay, A. (2025, June 14).")
    from archiver_app.cite.metadata import PageMeta, declared
    from archiver_app.replay.pages import StoredPage

    broken = StoredPage("https://harbour.example/x.pdf", "application/pdf", b"%PDF-1.4 junk", None)
    assert declared(broken) == PageMeta()  # a PDF that cannot be read declares nothing


def test_an_error_page_is_cited_as_one(library: Library, tmp_path: Path) -> None:
    """A capture whose server answered 404 was cited as the page ("Error response. (n.d.).
    ... Retrieved ... from http://.../gone.html"), in an export's bibliography too: each
    format now says it is the server's error page."""
    from archiver_app.cite.formats import bibliography

    url = "http://127.0.0.1:18518/gone.html"
    w = ArchiveWriter(library, "collections/default/2026/03/e/capture.warc.gz")
    w.response(url, "<title>Error response</title><p>404</p>", at=WHEN, status=404, page=True)
    w.commit()
    sid = _page_id(library, url)
    r = citation(library, sid)
    assert (r.title, r.error_page) == ("Capture of " + url, "HTTP 404 error page")
    r = replace(r, title="Error response")  # as a capture of it is titled
    apa = formatted([r], "apa")
    assert apa.startswith("Error response [HTTP 404 error page]. (n.d.). Archiver (")
    html_apa = formatted([r], "apa", as_html=True)
    assert html_apa.startswith("<i>Error response</i> [HTTP 404 error page]. (n.d.).")
    assert "“Error Response.” HTTP 404 error page. 127.0.0.1," in formatted([r], "mla")
    assert "“Error Response.” HTTP 404 error page." in formatted([r], "chicago")
    for style in ("ieee", "harvard-cite-them-right"):  # styles without a genre say it too
        assert "[HTTP 404 error page]." in formatted([r], style), style
    fields = {
        f.key: f.value for f in bibtexparser.parse_string(render([r], "bibtex")).entries[0].fields
    }
    assert fields["titleaddon"] == "[HTTP 404 error page]"
    assert fields["note"].startswith(
        "HTTP 404 error page: the server answered HTTP 404 (Not Found)."
    )
    [item] = json.loads(render([r], "csl-json"))
    jsonschema.validate([item], CSL_SCHEMA, cls=jsonschema.Draft7Validator)
    assert item["genre"] == "HTTP 404 error page" and item["note"].startswith("HTTP 404 error")
    [record] = rispy.loads(render([r], "ris"))
    assert record["type_of_work"] == "HTTP 404 error page"
    assert "[HTTP 404 error page]</a>" in robust_link(r)
    bib, csl = bibliography(library, [sid])  # an export's and an edition's bibliography
    assert "titleaddon = {[HTTP 404 error page]}" in bib
    assert json.loads(csl)[0]["genre"] == "HTTP 404 error page"
    ok = citation(library, _page(library, "https://harbour.example/cranes", ARTICLE))
    assert ok.error_page is None and "error page" not in formatted([ok], "apa") + render(
        [ok], "bibtex"
    )


def _page_id(library: Library, url: str) -> int:
    with library.session() as s:
        from archiver_app.store.models import Snapshot

        return s.query(Snapshot).filter_by(url=url).one().id


def test_a_declared_publisher_is_cited_as_the_site_not_the_host(library: Library) -> None:
    head = '<meta name="citation_publisher" content="WHO Press">'
    url = "http://127.0.0.1:18518/report.html"
    r = citation(library, _page(library, url, f"<html><head>{head}</head></html>"))
    assert r.site == "WHO Press"
    assert formatted([r], "apa").startswith("WHO Press. (n.d.). Capture of http")
    assert "organization = {WHO Press}" in render([r], "bibtex")
