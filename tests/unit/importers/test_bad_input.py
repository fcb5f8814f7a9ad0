"""Every bad input the issue lists: reported per file with its reason, good data kept,
nothing written outside the library."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.warc import wacz
from archiver_app.warc.scan import scan_records
from tests.helpers.files import tree_digest
from tests.helpers.warcs import site, write_warc


def make_wacz(
    path: Path,
    warc: bytes,
    *,
    extra: dict[str, bytes] | None = None,
    hash_override: str | None = None,
    compress_warc: bool = False,
) -> Path:
    entries = {"archive/data.warc.gz": warc, "pages/pages.jsonl": b'{"format": "json-pages-1.0"}\n'}
    entries.update(extra or {})
    resources = [
        {
            "name": n.rsplit("/", 1)[-1],
            "path": n,
            "bytes": len(d),
            "hash": "sha256:" + hashlib.sha256(d).hexdigest(),
        }
        for n, d in entries.items()
    ]
    if hash_override:
        resources[0]["hash"] = hash_override
    package = json.dumps(
        {"profile": "data-package", "wacz_version": "1.1.1", "resources": resources}
    ).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data, zipfile.ZIP_DEFLATED if compress_warc else zipfile.ZIP_STORED)
        zf.writestr("datapackage.json", package)
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    folder = tmp_path / "inputs"
    folder.mkdir()
    good = write_warc(folder / "good.warc.gz", site(3))
    data = good.read_bytes()
    spans = [(r.offset, r.length) for r in scan_records(good)]
    off, length = spans[2]
    (folder / "truncated.warc.gz").write_bytes(data[: off + length // 2] + data[off + length :])
    plain = write_warc(tmp_path / "plain.warc", site(3, host="lie.example"), gz=False).read_bytes()
    first = [(r.offset, r.length) for r in scan_records(tmp_path / "plain.warc")][2][0]
    i = plain.index(b"Content-Length: ", first)
    j = plain.index(b"\r\n", i)
    (folder / "lying.warc").write_bytes(
        plain[:i] + b"Content-Length: %d" % (int(plain[i + 16 : j]) + 60) + plain[j:]
    )
    (tmp_path / "plain.warc").unlink()
    (folder / "notes.warc").write_bytes(b"Just some notes, not an archive.\n" * 20)
    (folder / "empty.warc.gz").write_bytes(b"")
    warc2 = write_warc(tmp_path / "w2.warc.gz", site(2, host="wacz.example")).read_bytes()
    (tmp_path / "w2.warc.gz").unlink()
    make_wacz(folder / "mismatch.wacz", warc2, hash_override="sha256:" + "0" * 64)
    make_wacz(folder / "slip.wacz", warc2, extra={"../../evil.txt": b"owned"})
    make_wacz(folder / "absolute.wacz", warc2, extra={"/tmp/evil.txt": b"owned"})
    make_wacz(
        folder / "bomb.wacz",
        warc2,
        extra={"pages/huge.jsonl": b"\0" * (16 * 1024 * 1024)},
        compress_warc=True,
    )
    (folder / "bookmarks.html").write_bytes(
        b"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p><DT><H3>Caf\xe9 \x81\x8d</H3><DL><p>"
        b'<DT><A HREF="https://a.example/">A \xff\xfe</A></DL></DL>'
    )
    return folder


EXPECTED = {
    "good.warc.gz": (OutcomeState.IMPORTED, ""),
    "truncated.warc.gz": (OutcomeState.IMPORTED, "damaged part"),
    "lying.warc": (OutcomeState.IMPORTED, "damaged part"),
    "notes.warc": (OutcomeState.FAILED, "neither a WARC nor an ARC"),
    "empty.warc.gz": (OutcomeState.FAILED, "empty (0 bytes)"),
    "mismatch.wacz": (OutcomeState.IMPORTED, ""),  # tampered: reported, good records kept
    "slip.wacz": (OutcomeState.FAILED, "zip slip"),
    "absolute.wacz": (OutcomeState.FAILED, "zip slip"),
    "bomb.wacz": (OutcomeState.FAILED, "zip bomb"),
    "bookmarks.html": (OutcomeState.FAILED, "unknown encoding"),
}


def test_each_bad_input_reported_with_reason(
    library: Library, inputs: Path, tmp_path: Path
) -> None:
    before = tree_digest(inputs)
    paths = [inputs / name for name in EXPECTED]
    report = import_paths(library, paths)
    got = {o.path.name: o for o in report.outcomes}
    assert set(got) == set(EXPECTED)
    for name, (state, reason) in EXPECTED.items():
        assert got[name].state is state, (name, got[name])
        assert reason in got[name].reason, (name, got[name].reason)
    # good records before and after each bad one were indexed
    assert got["good.warc.gz"].records == 6
    assert got["truncated.warc.gz"].records == 5 and got["truncated.warc.gz"].pages == 2
    # the record whose Content-Length lies is reported and not indexed
    assert got["lying.warc"].records == 5 and got["lying.warc"].pages == 2
    assert got["truncated.warc.gz"].problems and "offset" in got["truncated.warc.gz"].problems[0]
    assert got["mismatch.wacz"].records == 4
    assert got["mismatch.wacz"].problems[0] == (
        "differs from its datapackage.json: archive/data.warc.gz was changed (its hash differs)"
    )
    # nothing outside the library was written or changed
    assert tree_digest(inputs) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inputs", "library"]
    assert not (tmp_path.parent / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()
    # failed inputs left no folders or partial files in the library
    warcs = sorted(p.name for p in (library.root / "collections").rglob("*") if p.is_file())
    assert warcs == [
        "data.warc.gz",
        "good.warc.gz",
        "index.json",
        "index.json",
        "index.json",
        "index.json",
        "lying.warc",
        "truncated.warc.gz",
    ]


def test_good_wacz_imports_and_reimport_is_skipped(library: Library, tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "w.warc.gz", site(2, host="wacz.example")).read_bytes()
    pages = (
        b'{"format": "json-pages-1.0", "id": "pages"}\n'
        b'{"url": "https://wacz.example/page1", "ts": "2024-03-02T10:00:00Z"}\n'
    )
    wacz = make_wacz(tmp_path / "ok.wacz", warc, extra={"pages/pages.jsonl": pages})
    first = import_paths(library, [wacz]).outcomes[0]
    assert first.state is OutcomeState.IMPORTED, first.reason
    # the pages list decides what is a page: only page1
    assert (first.records, first.pages) == (4, 1)
    again = import_paths(library, [wacz]).outcomes[0]
    assert again.state is OutcomeState.SKIPPED and "already in the library" in again.reason


def test_link_mode_indexes_in_place(library: Library, tmp_path: Path) -> None:
    src = write_warc(tmp_path / "linked.warc.gz", site(2))
    out = import_paths(library, [src], link=True).outcomes[0]
    assert out.state is OutcomeState.IMPORTED and out.records == 4
    assert not list((library.root / "collections").rglob("*.warc.gz"))
    import sqlite3

    conn = sqlite3.connect(library.db_path)
    rows = conn.execute("SELECT external_path, kind FROM files WHERE kind = 'warc'").fetchall()
    conn.close()
    assert rows == [(str(src), "warc")]
    sidecar = json.loads(next((library.root / "collections").rglob("index.json")).read_text())
    assert sidecar["files"][0]["external_path"] == str(src)
    assert sidecar["fs_version"] and sidecar["capture_fidelity"] == "imported"
    # a linked file is read where it is, by export too
    from archiver_app.export import Selection, export

    result = export(library, Selection(), tmp_path / "linked.wacz")
    assert (result.records, result.pages, result.problems) == (4, 2, [])


def _patch_first_entry(path: Path, *, method: int | None = None, encrypted: bool = False) -> Path:
    """Mark the zip's first entry (the WARC) as compressed with ``method`` or encrypted, in
    its local and its central header."""
    data = bytearray(path.read_bytes())
    central = data.find(b"PK\x01\x02")
    for flags, method_at in ((6, 8), (central + 8, central + 10)):
        if method is not None:
            data[method_at : method_at + 2] = method.to_bytes(2, "little")
        if encrypted:
            data[flags] |= 1
    path.write_bytes(bytes(data))
    return path


def test_unreadable_wacz_entries_fail_their_file_only(library: Library, tmp_path: Path) -> None:
    warc = write_warc(tmp_path / "w.warc.gz", site(2, host="wacz.example")).read_bytes()
    deep = tmp_path / "deep.wacz"
    with zipfile.ZipFile(deep, "w") as zf:
        zf.writestr("archive/data.warc.gz", warc)
        zf.writestr("datapackage.json", b"[" * 200_000)
    deep_pages = make_wacz(
        tmp_path / "deep_pages.wacz", warc, extra={"pages/pages.jsonl": b"[" * 200_000 + b"\n"}
    )
    method = _patch_first_entry(make_wacz(tmp_path / "method99.wacz", warc), method=99)
    encrypted = _patch_first_entry(make_wacz(tmp_path / "encrypted.wacz", warc), encrypted=True)
    good = write_warc(tmp_path / "good.warc.gz", site(1))
    report = import_paths(library, [deep, deep_pages, method, encrypted, good])
    got = {o.path.name: o for o in report.outcomes}
    assert got["deep.wacz"].state is OutcomeState.FAILED
    assert got["deep.wacz"].reason == "datapackage.json nests too deeply to read"
    # a pages line nested too deeply is no page, as a line that is not JSON
    assert got["deep_pages.wacz"].state is OutcomeState.IMPORTED
    assert got["method99.wacz"].state is OutcomeState.FAILED
    assert "compression method that cannot be read" in got["method99.wacz"].reason
    assert got["encrypted.wacz"].state is OutcomeState.FAILED
    assert "is encrypted" in got["encrypted.wacz"].reason
    assert got["good.warc.gz"].state is OutcomeState.IMPORTED


def test_an_unexpected_error_fails_that_file_only(
    library: Library,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from archiver_app.importers import run

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.warc.gz", "b.warc.gz", "c.warc.gz"):
        write_warc(folder / name, site(1, host=name.replace(".warc.gz", ".example")))
    real = run.import_warc_file

    def import_warc_file(lib: Library, path: Path, **kwargs: object) -> object:
        if path.name == "b.warc.gz":
            raise LookupError("something nobody thought of")
        return real(lib, path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "import_warc_file", import_warc_file)
    report = import_paths(library, [folder])
    assert [(o.path.name, o.state, o.reason) for o in report.outcomes] == [
        ("a.warc.gz", OutcomeState.IMPORTED, ""),
        (
            "b.warc.gz",
            OutcomeState.FAILED,
            "unexpected error: LookupError: something nobody thought of",
        ),
        ("c.warc.gz", OutcomeState.IMPORTED, ""),
    ]
    assert "importing" in caplog.text and "something nobody thought of" in caplog.text


def test_a_wacz_warc_gzipped_as_one_stream_is_recompressed(
    library: Library, tmp_path: Path
) -> None:
    import gzip

    plain = write_warc(tmp_path / "w.warc", site(2, host="wacz.example"), gz=False).read_bytes()
    whole = make_wacz(tmp_path / "whole.wacz", gzip.compress(plain))
    out = import_paths(library, [whole]).outcomes[0]
    assert out.state is OutcomeState.IMPORTED, out.reason
    assert out.records == 4
    [stored] = (library.root / "collections").rglob("*.warc.gz")
    assert gzip.decompress(stored.read_bytes()) == plain
    assert [r.length > 0 for r in scan_records(stored)] == [True] * 4
    assert not list(stored.parent.glob(".*"))  # no temporary file left


def _big_warc(path: Path) -> Path:
    """Over one batch of records (progress, and a chance to cancel, before the end)."""
    from tests.helpers.warcs import Resp, html_page

    assets = [Resp(f"https://b.example/{i}.png", b"x" * 10, mime="image/png") for i in range(2100)]
    return write_warc(path, [*assets, Resp("https://b.example/", html_page("Home", "last page"))])


def _counts(library: Library) -> tuple[int, int, int, int]:
    import sqlite3

    conn = sqlite3.connect(library.db_path)
    try:
        return tuple(  # type: ignore[return-value]
            conn.execute(sql).fetchone()[0]
            for sql in (
                "SELECT count(*) FROM records",
                "SELECT count(*) FROM snapshots",
                "SELECT count(*) FROM files WHERE kind = 'warc'",
                "SELECT count(*) FROM settings WHERE key LIKE 'import-incomplete:%'",
            )
        )
    finally:
        conn.close()


def test_a_cancelled_import_leaves_nothing_and_imports_again(
    library: Library, tmp_path: Path
) -> None:
    from archiver_app.tasks import CancelToken, ProgressUpdate
    from archiver_app.tasks.progress import Cancelled

    src = _big_warc(tmp_path / "big.warc.gz")
    cancel = CancelToken()

    def progress(update: ProgressUpdate) -> None:
        if update.total is None:  # a batch, not the end
            cancel.cancel()

    with pytest.raises(Cancelled):
        import_paths(library, [src], progress=progress, cancel=cancel)
    assert _counts(library) == (0, 0, 0, 0)
    assert not [p for p in (library.root / "collections").rglob("*") if p.is_file()]
    again = import_paths(library, [src]).outcomes[0]
    assert again.state is OutcomeState.IMPORTED and again.records == 2101
    assert _counts(library) == (2101, 1, 1, 0)
    third = import_paths(library, [src]).outcomes[0]
    assert third.state is OutcomeState.SKIPPED and "already in the library" in third.reason


def test_a_file_whose_import_stopped_is_imported_again(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archiver_app.importers import incomplete
    from archiver_app.tasks import ProgressUpdate

    src = _big_warc(tmp_path / "big.warc.gz")

    def progress(update: ProgressUpdate) -> None:
        if update.total is None:
            raise RuntimeError("the power went out")

    # as if the process had died: nothing is undone
    monkeypatch.setattr(incomplete, "forget_on_error", lambda lib, ids: None)
    monkeypatch.setattr(incomplete, "drop_sidecar", lambda lib, folder: None)
    first = import_paths(library, [src], progress=progress).outcomes[0]
    assert first.state is OutcomeState.FAILED and "the power went out" in first.reason
    records, _, files, pending = _counts(library)
    assert 0 < records < 2101 and (files, pending) == (1, 1)
    stale = list((library.root / "collections").rglob("*.warc.gz"))
    monkeypatch.undo()
    again = import_paths(library, [src]).outcomes[0]
    assert again.state is OutcomeState.IMPORTED and again.records == 2101
    assert _counts(library) == (2101, 1, 1, 0)
    assert list((library.root / "collections").rglob("*.warc.gz")) != stale
    assert len(list((library.root / "collections").rglob("*.warc.gz"))) == 1


def test_an_import_running_in_another_process_is_not_undone(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file marked incomplete while another process (a second window, a terminal) still
    imports it is skipped, not forgotten under it; once that process is gone (killed), the
    file is imported again."""
    import signal
    import subprocess
    import sys

    from archiver_app.hashing import sha256_file
    from archiver_app.importers import incomplete
    from archiver_app.tasks import ProgressUpdate

    src = _big_warc(tmp_path / "big.warc.gz")

    def progress(update: ProgressUpdate) -> None:
        if update.total is None:
            raise RuntimeError("stopped here")

    monkeypatch.setattr(incomplete, "forget_on_error", lambda lib, ids: None)
    monkeypatch.setattr(incomplete, "drop_sidecar", lambda lib, folder: None)
    assert import_paths(library, [src], progress=progress).outcomes[0].state is OutcomeState.FAILED
    monkeypatch.undo()
    partial = _counts(library)
    lock = library.root / ".locks" / f"import-{sha256_file(src)}.lock"
    with subprocess.Popen(  # the other process, still importing: it holds the lock
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path;"
            "from archiver_app.filelock import held_or_busy\n"
            "with held_or_busy(Path(sys.argv[1])) as mine:\n"
            "    print(mine, flush=True); time.sleep(120)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
            busy = import_paths(library, [src]).outcomes[0]
            assert busy.state is OutcomeState.SKIPPED and busy.reason == incomplete.BEING_IMPORTED
            assert _counts(library) == partial  # nothing of the running import was undone
        finally:
            holder.send_signal(signal.SIGKILL)  # it dies mid-import: the lock goes with it
            holder.wait()
    again = import_paths(library, [src]).outcomes[0]
    assert again.state is OutcomeState.IMPORTED and again.records == 2101
    assert _counts(library) == (2101, 1, 1, 0)
    assert not list((library.root / ".locks").iterdir())  # released locks leave no file


def test_a_cancelled_wacz_import_leaves_nothing(library: Library, tmp_path: Path) -> None:
    from archiver_app.tasks import CancelToken, ProgressUpdate
    from archiver_app.tasks.progress import Cancelled

    small = write_warc(tmp_path / "small.warc.gz", site(2, host="wacz.example")).read_bytes()
    big = _big_warc(tmp_path / "big.warc.gz").read_bytes()
    wacz = make_wacz(tmp_path / "two.wacz", small, extra={"archive/z.warc.gz": big})
    cancel = CancelToken()

    def progress(update: ProgressUpdate) -> None:
        if update.total is None:  # in the second WARC
            cancel.cancel()

    with pytest.raises(Cancelled):
        import_paths(library, [wacz], progress=progress, cancel=cancel)
    assert _counts(library) == (0, 0, 0, 0)
    assert not [p for p in (library.root / "collections").rglob("*") if p.is_file()]
    again = import_paths(library, [wacz]).outcomes[0]
    assert again.state is OutcomeState.IMPORTED and again.records == 2101 + 4


def test_wacz_entries_with_the_same_clean_name_are_all_imported(
    library: Library, tmp_path: Path
) -> None:
    import sqlite3

    from archiver_app.warc.reader import read_record_at

    def warc(host: str) -> bytes:
        return write_warc(tmp_path / f"{host}.warc.gz", site(1, host=host)).read_bytes()

    wacz = make_wacz(
        tmp_path / "same.wacz",
        warc("one.example"),
        extra={
            "archive/x/data.warc.gz": warc("two.example"),
            "archive/y/Data.warc.gz": warc("three.example"),
            "archive/a b.warc.gz": warc("four.example"),
            "archive/a_b.warc.gz": warc("five.example"),
        },
    )
    out = import_paths(library, [wacz]).outcomes[0]
    assert out.state is OutcomeState.IMPORTED, out.reason
    assert (out.records, out.pages) == (10, 5)
    conn = sqlite3.connect(library.db_path)
    rows = conn.execute("SELECT url, warc_file, warc_offset, warc_length FROM snapshots").fetchall()
    conn.close()
    names = sorted(r[1].rsplit("/", 1)[1] for r in rows)
    assert names == [
        "Data-3.warc.gz",
        "a_b-2.warc.gz",
        "a_b.warc.gz",
        "data-2.warc.gz",
        "data.warc.gz",
    ]
    for url, rel, offset, length in rows:
        assert read_record_at(library.abspath(rel), offset, length).uri == url


def test_an_overlong_pages_line_is_skipped_unread(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pages.jsonl line past the limit (a hostile WACZ: a line of gigabytes) is skipped
    without being held whole; the lines around it are still pages."""
    monkeypatch.setattr(wacz, "MAX_PAGE_LINE", 4096)
    monkeypatch.setattr(wacz, "CHUNK", 1000)  # the long line's rest is read in pieces
    long_line = json.dumps({"url": "https://wacz.example/long", "text": "x" * 10_000}).encode()
    pages = b"\n".join(
        [
            b'{"format": "json-pages-1.0", "id": "pages"}',
            b'{"url": "https://wacz.example/page0"}',
            long_line,
            b'{"url": "https://wacz.example/page1", "title": "after"}',
        ]
    )
    warc = write_warc(tmp_path / "w.warc.gz", site(2, host="wacz.example")).read_bytes()
    path = make_wacz(tmp_path / "long.wacz", warc, extra={"pages/pages.jsonl": pages})
    info = wacz.open_wacz(path)
    assert [(p.url, p.title) for p in info.pages] == [
        ("https://wacz.example/page0", None),
        ("https://wacz.example/page1", "after"),
    ]
    outcome = import_paths(library, [path]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED and outcome.pages == 2, outcome.reason
