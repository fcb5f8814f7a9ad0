"""``archiver import``, ``search`` and ``export`` through the real argument parser."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from archiver_app.cli import main

DATA = Path(__file__).parents[2] / "data"


def test_import_search_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = str(tmp_path / "lib")
    bad = tmp_path / "bad.warc"
    bad.write_bytes(b"not a warc\n")
    code = main(
        ["--library", lib, "import", "--tag", "sea", str(DATA / "wget-1.21.3.warc.gz"), str(bad)]
    )
    out = capsys.readouterr().out
    assert code == 1  # one input failed
    assert "imported warc" in out and "11 records, 3 pages" in out
    assert f"failed   warc      {bad}: it is neither a WARC nor an ARC file" in out

    urls = tmp_path / "bad-urls.txt"  # a failed file's reason is said once
    urls.write_text("not a url\n")
    assert main(["--library", lib, "import", str(urls)]) == 1
    assert capsys.readouterr().out.count("malformed URL 'not a url'") == 1

    monkeypatch.setattr("sys.stdin", io.StringIO("https://example.org/\n"))
    assert main(["--library", lib, "import", "--json", "-"]) == 0
    item = json.loads(capsys.readouterr().out)
    assert item["state"] == "queued" and item["urls"] == 1
    assert main(["--library", lib, "jobs", "--json"]) == 0
    kinds = {j["id"]: j["kind"] for j in json.loads(capsys.readouterr().out)}
    assert kinds[item["job_id"]] == "capture"  # beside the two import jobs themselves
    monkeypatch.setattr("sys.stdin", io.StringIO("https://example.org/b\n"))
    assert main(["--library", lib, "import", "-"]) == 0  # says how the capture runs
    assert "run the queued captures: archiver worker --once" in capsys.readouterr().out

    assert main(["--library", lib, "search", "storm", "--tag", "sea"]) == 0
    out = capsys.readouterr().out
    assert "Lighthouse keepers" in out and "[storm]" in out
    first = out.splitlines()[0]  # "#<id>  <when>  <url>"
    sid = int(first.split()[0].removeprefix("#"))  # the id cite, diff and delete take
    day = first.split()[1]  # the capture's day: --until takes it whole, as the app does
    assert main(["--library", lib, "search", "storm", "--since", day, "--until", day]) == 0
    assert capsys.readouterr().out.splitlines()[0] == first
    assert main(["--library", lib, "cite", str(sid), "--format", "csl-json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["URL"] == first.split()[-1]
    assert main(["--library", lib, "search", "gale", "--json", "--status", "2xx"]) == 0
    [hit] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert hit["title"] == "Storm log" and hit["fidelity"] == "imported"
    # filters that cannot match say so (they printed "no matches", as if never archived)
    assert main(["--library", lib, "search", "storm", "--collection", "nosuch"]) == 2
    assert "no collection 'nosuch'; there are: default" in capsys.readouterr().err
    assert main(["--library", lib, "search", "storm", "--since", day, "--until", "2000-01-01"]) == 2
    assert "--since is after --until" in capsys.readouterr().err
    host = first.split()[-1].split("/")[2]
    for typed in (f"{host}:80", f"http://{host}/any/page"):  # a host:port or an address
        assert main(["--library", lib, "search", "storm", "--domain", typed]) == 0
        assert capsys.readouterr().out.splitlines()[0] == first, typed
    assert main(["--library", lib, "search", "storm OR gale", "--limit", "1"]) == 0
    assert capsys.readouterr().err == "(more than 1; --offset 1 shows the next)\n"
    assert main(["--library", lib, "search", "storm OR gale", "--limit", "2"]) == 0  # all
    shown = capsys.readouterr()
    assert len([x for x in shown.out.splitlines() if x.startswith("#")]) == 2 and not shown.err
    assert main(["--library", lib, "search", "x", "--status", "teapot"]) == 2
    assert "invalid status filter" in capsys.readouterr().err
    for status in ("\u00b2", "99999999999999999999"):
        assert main(["--library", lib, "search", "x", "--status", status]) == 2
        assert capsys.readouterr().err.startswith("archiver: error: invalid status filter")
    with pytest.raises(SystemExit):  # an excluded word alone reads as an option: said how
        main(["--library", lib, "search", "-storm"])
    assert "put -- before the words, as in: archiver search -- -word" in capsys.readouterr().err
    assert main(["--library", lib, "search", "--", "gale", "-storm"]) == 0
    capsys.readouterr()
    # an excluded word alone: the captures without it (it listed every capture)
    assert main(["--library", lib, "search", "--", "-storm"]) == 0
    without = [x for x in capsys.readouterr().out.splitlines() if x.startswith("#")]
    assert len(without) == 1 and first not in without
    for typed in ("OR", "(", "-"):  # no word at all: said, not read as "list everything"
        assert main(["--library", lib, "search", "--", typed]) == 2
        assert f"nothing to search for in {typed!r}" in capsys.readouterr().err
    many = [
        " OR ".join(f"w{i}" for i in range(100)),
        "storm " + " ".join(f"-w{i}" for i in range(100)),
    ]
    assert main(["--library", lib, "search", many[0]]) == 0  # FTS5's parser stack overflowed
    assert main(["--library", lib, "search", "--", many[1]]) == 0
    assert capsys.readouterr().out.count("#") == 2
    assert main(["--library", lib, "search", " OR ".join(f"w{i}" for i in range(201))]) == 2
    assert "too many words in the search: at most 200" in capsys.readouterr().err

    dest = tmp_path / "sea.wacz"
    assert main(["--library", lib, "export", "--tag", "sea", "-o", str(dest)]) == 0
    assert "3 pages" in capsys.readouterr().out
    assert "indexes/index.cdx" in zipfile.ZipFile(dest).namelist()
    assert main(["--library", lib, "export", "--tag", "sea", "-o", str(dest)]) == 2
    assert "already exists" in capsys.readouterr().err
    # --overwrite never replaces the folder that holds the library
    args = ["--library", lib, "export", "--format", "folder", "--overwrite", "-o", str(tmp_path)]
    assert main(args) == 2
    assert "holds the library folder" in capsys.readouterr().err
    assert (Path(lib) / "library.db").is_file() and dest.is_file()


def test_archivebox_flag_registers_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = str(tmp_path / "lib")
    data = tmp_path / "archivebox-data"
    (data / "archive").mkdir(parents=True)
    args = ["--library", lib, "import", "--collection", "old", "--archivebox"]
    assert main([*args, str(data)]) == 0
    out = capsys.readouterr().out
    assert f"registered ArchiveBox folder {data}" in out and "now with: archiver migrate" in out
    assert main([*args, str(tmp_path)]) == 2  # no archive/ folder: not ArchiveBox
    assert "not an ArchiveBox data folder" in capsys.readouterr().err
    import sqlite3

    conn = sqlite3.connect(Path(lib) / "library.db")
    rows = conn.execute(
        "SELECT i.kind, i.path, i.mode, c.slug FROM import_sources i "
        "JOIN collections c ON c.id = i.collection_id"
    ).fetchall()
    conn.close()
    assert rows == [("archivebox", str(data), "copy", "old")]


def test_until_takes_the_whole_day_as_the_apps_date_filter_does() -> None:
    from datetime import UTC, datetime

    from archiver_app.commands.search_cmd import _date

    day = _date("2026-11-27", "--until", day_included=True)
    assert day == datetime(2026, 11, 28, tzinfo=UTC)  # captures on the 27th are in
    assert _date("2026-11-27T12:00", "--until", day_included=True) == datetime(
        2026, 11, 27, 12, tzinfo=UTC
    )  # a time is the bound itself
    assert _date("2026-11-27", "--since") == datetime(2026, 11, 27, tzinfo=UTC)
