"""An edition's output for people (``archiver edition``, coverage.md) shows addresses
readable (``bücher.example/мир``); its JSON and CSV keep them as stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.editions.coverage import targets_csv
from archiver_app.library import Library
from tests.unit.editions.memory_site import build

STORED = "http://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html"
SHOWN = "http://bücher.example/мир/東京.html"


def run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--library", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_edition_output_shows_addresses_readable_and_json_csv_keep_them_stored(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    build(library)
    library.editions.create("rivers", "e", year=2020, targets_text=f"{STORED}\n")
    assert [t.url for t in library.editions.coverage("e").targets] == [STORED]

    md = library.editions.coverage_markdown("e")
    assert f"| {SHOWN} |" in md and "| bücher.example |" in md and "xn--" not in md
    assert "%D0" not in md
    assert json.loads(library.editions.coverage_json("e"))["targets"][0]["url"] == STORED
    assert STORED in targets_csv(library.editions.coverage("e"))

    root = library.root
    code, out, _ = run(capsys, root, "edition", "show", "e")
    assert code == 0 and f"gap missing  {SHOWN}" in out and " bücher.example " in out
    assert "xn--" not in out and "%D0" not in out
    code, _, err = run(capsys, root, "edition", "choose", "e", STORED, "999")
    assert code == 1 and f"not a complete capture of {SHOWN} in" in err
    code, out, _ = run(capsys, root, "edition", "gap", "e", STORED, "--reason", "gone")
    assert code == 0 and out.strip() == f"reason recorded for {SHOWN}"
