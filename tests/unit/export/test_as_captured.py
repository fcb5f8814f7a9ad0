"""An export writes its captures as captured: a WARC altered after capture stops it before
anything is written (a signed export of altered records would verify as intact), naming
the captures; ``--skip-altered`` leaves them out, and the captures whose revisits need
them, and says so."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.errors import InputError
from archiver_app.export import Selection, export
from archiver_app.export.captured import CapturesNotAsCaptured
from archiver_app.export.signing import verify_wacz
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.warcs import Resp, html_page, site, write_warc


def _alter(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF  # inside the first gzip member: the file still reads as a WARC
    path.write_bytes(bytes(data))


def _stored(library: Library, collection: str) -> Path:
    (warc,) = (library.root / "collections" / collection).rglob("*.warc*")
    return warc


@pytest.fixture
def two_collections(library: Library, tmp_path: Path) -> Library:
    import_warc_file(library, write_warc(tmp_path / "a.warc.gz", site(2)), collection="alpha")
    import_warc_file(library, write_warc(tmp_path / "b.warc.gz", site(1, host="b.example")),
                     collection="beta")  # fmt: skip
    return library


def _export(library: Library, out: Path, *extra: str) -> int:
    return cli.main(["--library", str(library.root), "export", "-o", str(out), *extra])


def test_an_altered_capture_stops_a_signed_export_before_anything_is_written(
    two_collections: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = two_collections
    _alter(_stored(library, "alpha"))
    out = tmp_path / "out"
    out.mkdir()
    assert _export(library, out / "x.wacz", "--sign") == 1
    err = capsys.readouterr().err
    assert "export not written: 1 file of its captures is not as captured" in err
    assert "capture 1 (https://example.org/page0), capture 2 (https://example.org/page1)" in err
    assert "altered after capture" in err
    assert "archiver verify" in err and "--skip-altered" in err
    assert list(out.iterdir()) == []  # no WACZ, no temporary file


def test_skip_altered_leaves_them_out_and_says_so(
    two_collections: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = two_collections
    _alter(_stored(library, "alpha"))
    out = tmp_path / "x.wacz"
    assert _export(library, out, "--sign", "--skip-altered", "--bibliography") == 0
    said = capsys.readouterr().out
    assert "left out 2 captures not as captured" in said
    assert "capture 1 (https://example.org/page0)" in said
    with zipfile.ZipFile(out) as zf:
        pages = [json.loads(x)["url"] for x in zf.read("pages/pages.jsonl").splitlines()[1:]]
    assert pages == ["https://b.example/page0"]
    assert verify_wacz(out).ok
    assert "example.org/page0" not in (tmp_path / "x.bib").read_text("utf-8")


def test_a_capture_whose_revisit_needs_an_altered_file_is_left_out_too(
    library: Library, tmp_path: Path
) -> None:
    first = site(2)
    import_warc_file(library, write_warc(tmp_path / "one.warc.gz", first), collection="one")
    later = [
        Resp("https://example.org/new", html_page("New", "fresh"), date="2024-06-02T00:00:00Z")
    ]
    two = write_warc(tmp_path / "two.warc", later, gz=False,
                     revisit_of={"https://example.org/page0": first[0]})  # fmt: skip
    import_warc_file(library, two, collection="two")
    _alter(_stored(library, "one"))
    with pytest.raises(CapturesNotAsCaptured):
        export(library, Selection(collection="two"), tmp_path / "two.wacz")
    result = export(library, Selection(collection="two"), tmp_path / "two.wacz", skip_altered=True)
    assert result.left_out is not None
    assert result.pages == 1  # the new page; the revisit of page0 needs the altered WARC
    assert any("a revisit of a record in one of these files" in x for x in result.left_out.lines)
    assert verify_wacz(tmp_path / "two.wacz").ok


def test_a_collection_or_tag_that_does_not_exist_is_said_and_not_made(
    two_collections: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --collection nope`` said "no snapshot matches the selection", and the export
    job it queued made an empty collection 'nope'."""
    library = two_collections
    assert _export(library, tmp_path / "x.wacz", "--collection", "nope") == 2
    err = capsys.readouterr().err
    assert "there is no collection 'nope'; the collections are: alpha, beta" in err
    assert "nope" not in [c.slug for c in library.collections.all()]
    assert _export(library, tmp_path / "x.wacz", "--tag", "nope") == 2
    assert "there is no tag 'nope'; there are none" in capsys.readouterr().err
    with pytest.raises(InputError, match="there is no collection 'nope'"):
        library.exports.run(Selection(collection="nope"), tmp_path / "x.wacz")
    assert not (tmp_path / "x.wacz").exists()
