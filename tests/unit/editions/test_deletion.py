"""Deleting captures: rows, search entry and laptop files go; drive copies and captures
other captures depend on, or share a file with, are kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from archiver_app.api.deletion import DeleteCode
from archiver_app.library import Library
from archiver_app.search import Query, matching_ids
from archiver_app.store.models import File, Record, SnapshotTag
from tests.helpers.snapshots import add_snapshot


def _record(lib: Library, sid: int, revisit_of: int | None = None) -> int:
    with lib.write() as s:
        fid = s.scalar(select(File.id).where(File.snapshot_id == sid).limit(1))
        assert fid is not None
        rec = Record(url_key="k", ts="20260101000000000", url="https://x.example/",
                     record_type="revisit" if revisit_of else "response", file_id=fid,
                     offset=0, length=1, snapshot_id=sid, revisit_of_id=revisit_of)  # fmt: skip
        s.add(rec)
        s.flush()
        return rec.id


def test_a_deleted_capture_leaves_no_row_index_entry_or_file(library: Library) -> None:
    keep = add_snapshot(library, "https://x.example/keep", body="rivers", tags=("t",))
    gone = add_snapshot(library, "https://x.example/gone", body="rivers", tags=("t",))
    folder = library.root / str(library.snapshots.detail(gone).folder)  # type: ignore[union-attr]
    assert (folder / "text.txt").is_file()
    _record(library, gone)

    result, changes = library.snapshots.delete([gone, 999])
    assert {o.snapshot_id: o.code for o in result.outcomes} == {
        gone: DeleteCode.DELETED,
        999: DeleteCode.NOT_FOUND,
    }
    assert changes.snapshot_ids == {gone}
    assert library.snapshots.detail(gone) is None and not folder.exists()
    assert matching_ids(library, Query(text="rivers")) == [keep]
    with library.session() as s:
        assert s.scalar(select(func.count()).select_from(File).where(File.snapshot_id == gone)) == 0
        assert s.scalar(select(func.count()).select_from(Record)) == 0
        assert s.scalar(select(func.count()).select_from(SnapshotTag)) == 1
    assert library.snapshots.detail(keep) is not None


def test_a_capture_whose_payload_a_later_revisit_uses_is_refused(library: Library) -> None:
    first = add_snapshot(library, "https://x.example/")
    later = add_snapshot(library, "https://x.example/")
    _record(library, later, revisit_of=_record(library, first))
    result, changes = library.snapshots.delete([first])
    assert [o.code for o in result.outcomes] == [DeleteCode.IN_USE]
    assert "revisits" in result.outcomes[0].message and not changes.any
    # the refusal names the captures whose revisits hold it, so the user can find them
    assert f"1 other capture: #{later} https://x.example/" in result.outcomes[0].message
    assert library.snapshots.detail(first) is not None
    result, _ = library.snapshots.delete([later, first])  # together: nothing is left behind
    assert result.deleted == [first, later]


def test_a_page_of_an_imported_warc_is_deleted_only_with_the_other_pages(
    library: Library, tmp_path: Path
) -> None:
    """The pages of one imported WARC are one file: deleting one of them alone deleted the
    file with the others' records (their captures stayed listed, with nothing to replay).
    It is refused, naming them; all of them together are deleted."""
    from archiver_app.importers.run import import_paths
    from archiver_app.store.models import Snapshot
    from tests.helpers.warcs import site, write_warc

    import_paths(library, [write_warc(tmp_path / "three.warc.gz", site(3))])
    with library.session() as s:
        urls = {int(i): str(u) for i, u in s.execute(select(Snapshot.id, Snapshot.url)).all()}
        pages = sorted(urls)
        warc = s.scalars(select(File).where(File.kind == "warc")).one()
        records = s.scalar(select(func.count()).select_from(Record))
    assert len(pages) == 3
    for sid in pages:  # the file's own page and the others alike
        result, changes = library.snapshots.delete([sid])
        [outcome] = result.outcomes
        assert outcome.code is DeleteCode.SHARED and not changes.any
        others = ", ".join(f"#{p} {urls[p]}" for p in pages if p != sid)
        assert outcome.message == (
            f"capture {sid} ({urls[sid]}) was imported in one WARC file with 2 other captures: "
            f"{others}; deleting it would delete theirs: delete them together"
        )
    assert (library.root / warc.path).is_file()
    with library.session() as s:
        assert s.scalar(select(func.count()).select_from(Record)) == records
    result, _ = library.snapshots.delete(pages)
    assert result.deleted == pages and not (library.root / warc.path).exists()
    with library.session() as s:
        assert s.scalar(select(func.count()).select_from(Record)) == 0


def test_a_file_that_cannot_be_removed_is_said_not_hidden(library: Library) -> None:
    gone = add_snapshot(library, "https://x.example/gone", body="rivers")
    folder = library.root / str(library.snapshots.detail(gone).folder)  # type: ignore[union-attr]
    text = folder / "text.txt"
    text.unlink()
    text.mkdir()  # unlink() fails on it (root ignores permissions: a folder does not)
    (text / "inside").write_text("x")
    result, _ = library.snapshots.delete([gone])
    assert result.deleted == [gone]
    assert len(result.left) == 1 and result.left[0].endswith("text.txt")


def test_the_command_asks_first_at_a_terminal(
    library: Library, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from archiver_app.cli import main

    gone = add_snapshot(library, "https://x.example/gone", title="Gone page")
    root = str(library.root)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("\n"))  # Return: no
    assert main(["--library", root, "delete", str(gone)]) == 1
    out = capsys.readouterr().out
    assert f"  #{gone} Gone page (https://x.example/gone)\n" in out
    assert "Delete this capture? Files on this computer are removed" in out
    assert out.endswith("nothing was deleted\n")
    assert library.snapshots.detail(gone) is not None
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["--library", root, "delete", str(gone)]) == 0
    assert library.snapshots.detail(gone) is None
    other = add_snapshot(library, "https://x.example/other")
    monkeypatch.setattr("sys.stdin", Terminal(""))  # --yes: not asked
    assert main(["--library", root, "delete", "--yes", str(other)]) == 0
    assert library.snapshots.detail(other) is None


def test_without_a_terminal_the_command_deletes_only_with_yes(
    library: Library, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``echo n | archiver delete 6`` deleted capture 6 without asking: piped input is not
    a person at a terminal, so nothing is deleted without ``--yes``, and it says so."""
    import io

    from archiver_app.cli import main

    kept = add_snapshot(library, "https://x.example/kept")
    root = str(library.root)
    for piped in ("n\n", "y\n", ""):
        monkeypatch.setattr("sys.stdin", io.StringIO(piped))  # a pipe: no terminal
        assert main(["--library", root, "delete", str(kept)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            "archiver: not deleted: no terminal to ask on; add --yes to delete without asking\n"
        )
        assert library.snapshots.detail(kept) is not None
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["--library", root, "delete", "--yes", str(kept)]) == 0
    assert f"deleted capture {kept}" in capsys.readouterr().out
    assert library.snapshots.detail(kept) is None
