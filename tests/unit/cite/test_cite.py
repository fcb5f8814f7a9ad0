"""Citations of captures, each format read back by a reference parser."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import bibtexparser
import jsonschema
import pytest
import rispy

from archiver_app import cli
from archiver_app.cite import citation, formatted, render, robust_link
from archiver_app.errors import InputError
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter

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


def test_formatted_styles(library: Library, capture: int) -> None:
    r = citation(library, capture)
    apa = formatted([r], "apa")
    assert apa.startswith("harbour.example. (n.d.).")
    assert "Retrieved March 2, 2026, from https://www.harbour.example/notices" in apa
    assert "Accessed 2 Mar. 2026" in formatted([r], "mla")
    assert "Accessed March 2, 2026" in formatted([r], "chicago")
    with pytest.raises(InputError, match="no citation style"):
        formatted([r], "no-such-style")


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
    assert attrs["data-versiondate"] == "2026-03-02"
    assert parser.text == TITLE


def test_the_command(library: Library, capture: int, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(library.root)
    assert cli.main(["cite", str(capture), "--format", "bibtex", "--library", root]) == 0
    assert capsys.readouterr().out.startswith("@online{harbourexample20260302_")
    assert cli.main(["cite", str(capture), "--library", root]) == 0
    assert "(n.d.)" in capsys.readouterr().out
