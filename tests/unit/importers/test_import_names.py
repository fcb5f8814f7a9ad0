"""What an import is named after and what it says: a WACZ's folder and first page are named
after the capture's time (as a capture's and an imported WARC's are), not the import's; a
folder export's README tells how to import the folder (its pages list with it) and what
its WARC holds; ``--link`` on a WACZ says the WACZ was copied."""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.cli import main
from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter

CAPTURED = datetime(2024, 5, 6, 1, 10, 14, tzinfo=UTC)
IMPORTED = datetime(2031, 2, 3, 4, 5, 6, tzinfo=UTC)


def _export(library: Library, dest: Path, fmt: str = "wacz") -> Path:
    one = ArchiveWriter(library, "imports/one.warc.gz")
    one.response("https://site.example/", "<title>Home</title>", at=CAPTURED, page=True)
    one.commit()
    export(library, Selection(), dest, fmt=fmt)
    return dest


def _without_pages_list(wacz: Path, dest: Path) -> Path:
    with zipfile.ZipFile(wacz) as src, zipfile.ZipFile(dest, "w") as out:
        for info in src.infolist():
            if not info.filename.startswith("pages/"):
                out.writestr(info, src.read(info))
    return dest


@pytest.mark.parametrize("listed", [True, False])
def test_a_wacz_import_is_named_after_its_capture_time(
    library: Library, tmp_path: Path, listed: bool
) -> None:
    wacz = _export(library, tmp_path / "all.wacz")
    if not listed:  # no pages list: its first WARC's first record dates it
        wacz = _without_pages_list(wacz, tmp_path / "unlisted.wacz")
    with Library.open(tmp_path / "other", create=True, clock=lambda: IMPORTED) as other:
        [outcome] = import_paths(other, [wacz]).outcomes
        with other.engine.connect() as conn:
            uid = conn.scalar(text("SELECT uid FROM snapshots"))
    assert outcome.folder is not None
    assert outcome.folder.startswith("collections/default/2024/05/20240506T011014Z-")
    assert uid == outcome.folder.rsplit("/", 1)[1]


def test_a_folder_export_tells_to_import_the_folder_and_what_its_warc_holds(
    library: Library, tmp_path: Path
) -> None:
    folder = _export(library, tmp_path / "out", fmt="folder")
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    assert "archiver import FOLDER" in readme
    assert "archiver import archive/data.warc.gz" not in readme
    assert "every HTTP response" not in readme
    assert "requests, responses and revisits" in readme and "resource records" in readme
    with Library.open(tmp_path / "other", create=True) as other:  # as the README says
        [outcome] = import_paths(other, [folder]).outcomes
        assert outcome.pages == 1


def test_link_on_a_wacz_says_it_was_copied(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = _export(library, tmp_path / "all.wacz")
    assert main(["--library", str(tmp_path / "other"), "import", "--link", str(wacz)]) == 0
    out = capsys.readouterr().out
    assert (
        f"imported wacz      {wacz}: 1 record, 1 page; copied: --link applies to WARC/ARC "
        "files, a WACZ's WARCs are extracted into the library"
    ) in out
