"""index.json detection and parsing, and the layout chain."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from archiver_app.errors import LibraryError
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.reconcile import pick_title
from archiver_app.layout.sidecar import UnreadableIndex, merge_results, read_index
from archiver_app.layout.versions import CHAIN, Placement, SnapshotFacts, plan_chain

WHEN = datetime(2021, 1, 20, 2, 51, 40, tzinfo=UTC)


def _write(folder: Path, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json").write_text(json.dumps(data))
    return folder


def test_detects_archivebox_07_and_08(tmp_path: Path) -> None:
    v07 = read_index(
        _write(
            tmp_path / "a",
            {
                "url": "https://e.example/",
                "timestamp": "1611111100.0",
                "title": "T",
                "tags": "b,a, ,a",
                "history": {"wget": [{"output": "e.example/index.html"}]},
            },
        )
    )
    assert (v07.fs_version, v07.captured_at, v07.tags) == ("archivebox-0.7", WHEN, ["a", "b"])
    assert v07.archive_results["wget"][0]["output"] == "e.example/index.html"
    v08 = read_index(
        _write(
            tmp_path / "b",
            {
                "url": "https://e.example/",
                "timestamp": "1611111100",
                "tags": ["x"],
                "archive_results": [
                    {"extractor": "pdf", "output": "output.pdf"},
                    {"extractor": "pdf", "output": "output.pdf", "start_ts": "2"},
                ],
            },
        )
    )
    assert v08.fs_version == "archivebox-0.8"
    assert len(v08.archive_results["pdf"]) == 2
    ours = read_index(
        _write(
            tmp_path / "c",
            {
                "fs_version": "archiver-1",
                "uid": "u1",
                "url": "https://e.example/",
                "captured_at": WHEN.isoformat(),
                "collection": "c",
            },
        )
    )
    assert (ours.fs_version, ours.uid, ours.collection) == ("archiver-1", "u1", "c")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no index.json"),
        ("{oops", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"url": "https://e.example/"}', "no layout we know"),
        ('{"url": "https://e.example/", "timestamp": "soon", "history": {}}', "not a number"),
        ('{"timestamp": "1", "history": {}}', "no url"),
    ],
)
def test_unreadable_indexes_are_reported(tmp_path: Path, content: str | None, message: str) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    if content is not None:
        (folder / "index.json").write_text(content)
    with pytest.raises(UnreadableIndex, match=message):
        read_index(folder)


def test_unsafe_output_paths_are_refused_per_entry(tmp_path: Path) -> None:
    parsed = read_index(
        _write(
            tmp_path / "f",
            {
                "url": "https://e.example/",
                "timestamp": "1611111100",
                "history": {
                    "a": [{"output": "../../etc/passwd"}],
                    "b": [{"output": "/etc/passwd"}],
                    "c": [{"output": "C:\\\\Windows\\\\x.dll"}],
                    "d": [{"output": "ok/index.html"}],
                    "title": [{"output": "A title, not a path"}],
                },
            },
        )
    )
    assert len(parsed.refused) == 3
    assert parsed.archive_results["a"][0]["output"] is None
    assert parsed.archive_results["a"][0]["refused_output"] == "../../etc/passwd"
    assert parsed.archive_results["d"][0]["output"] == "ok/index.html"


def test_merge_results_and_titles() -> None:
    a = {"wget": [{"output": "x", "start_ts": "2"}]}
    b = {"wget": [{"output": "x", "start_ts": "2"}, {"output": "y", "start_ts": "1"}], "pdf": []}
    merged = merge_results(a, b)
    assert [e["output"] for e in merged["wget"]] == ["y", "x"]
    assert set(merged) == {"wget", "pdf"}
    assert pick_title("https://e.example/", "Short", "A longer real title", None) == (
        "A longer real title"
    )
    assert pick_title("https://e.example/", None) == "https://e.example/"


def test_chain_folds_to_one_move(tmp_path: Path) -> None:
    assert CHAIN[-1] == CURRENT_FS_VERSION
    facts = SnapshotFacts("uid1", "news", WHEN, "1611111100.0")
    root = tmp_path / "lib"
    external = Placement(tmp_path / "abx", "archive/1611111100.0")
    plan = plan_chain("archivebox-0.7", external, facts, root)
    assert plan.versions == CHAIN
    assert plan.end == Placement(root, "collections/news/2021/01/uid1")
    inside = Placement(root, "archive/1611111100.0")
    # 0.7 -> 0.8 and 0.8 -> archiver-1 are no-ops for a folder already in the library
    assert plan_chain("archivebox-0.8", inside, facts, root).end == plan.end
    current = Placement(root, "collections/news/2021/01/uid1")
    assert not plan_chain(CURRENT_FS_VERSION, current, facts, root).moves
    with pytest.raises(LibraryError, match="unknown folder layout"):
        plan_chain("archiver-9", current, facts, root)
