"""An export carries each page's tags, notes and collection in its pages list (fields
other tools ignore), and an import into another library gives them back: the tags and
notes on the same captures, found by search, each page in a collection of its name unless
the user chose one (then the output says the list's collections were not used)."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.export import Selection, export
from archiver_app.gui.import_notice import import_notice
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from archiver_app.search import Query, search
from tests.helpers.archive import ArchiveWriter

HOME = "https://site.example/"
TIDES = "https://site.example/tides"
EARLY = datetime(2024, 5, 6, 1, 10, 14, tzinfo=UTC)
LATE = datetime(2024, 5, 6, 1, 11, 22, tzinfo=UTC)


def _labelled(library: Library) -> None:
    """HOME twice in 'default' (the later one tagged), TIDES in 'research' with notes."""
    one = ArchiveWriter(library, "imports/one.warc.gz")
    one.response(HOME, "<title>Home</title><p>home words</p>", at=EARLY, page=True)
    one.response(HOME, "<title>Home</title><p>home words again</p>", at=LATE, page=True)
    one.commit()
    two = ArchiveWriter(library, "imports/two.warc.gz")
    two.response(TIDES, "<title>Tides</title><p>tide tables</p>", at=LATE, page=True)
    two.commit(collection="research")
    rows = _rows(library)
    late_home = next(i for i, url, at, *_ in rows if url == HOME and at == LATE)
    tides = next(i for i, url, *_ in rows if url == TIDES)
    library.tags.set([late_home], ["Harbour", "sea level"])
    library.tags.set([tides], ["sea level"])
    library.snapshots.set_notes(tides, "checked against the\ngauge data")


def _rows(lib: Library) -> list[tuple[int, str, datetime, str, str, tuple[str, ...]]]:
    """(id, url, time, collection slug, notes, tags) of every capture, by url and time."""
    with lib.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.id, s.url, s.captured_at, c.slug, s.notes FROM snapshots s "
                "JOIN collections c ON c.id = s.collection_id"
            )
        ).all()
        tags = conn.execute(
            text(
                "SELECT st.snapshot_id, t.name FROM snapshot_tags st "
                "JOIN tags t ON t.id = st.tag_id ORDER BY t.name"
            )
        ).all()
    out = []
    for sid, url, at, slug, notes in rows:
        when = datetime.fromisoformat(str(at)).replace(tzinfo=UTC)
        names = tuple(n for i, n in tags if i == sid)
        out.append((sid, url, when, slug, notes or "", names))
    return sorted(out, key=lambda r: (r[1], r[2]))


def _without_ids(rows: list[tuple[int, str, datetime, str, str, tuple[str, ...]]]) -> list[object]:
    return [r[1:] for r in rows]


def _exported(library: Library, tmp_path: Path, fmt: str) -> Path:
    _labelled(library)
    dest = tmp_path / ("all.wacz" if fmt == "wacz" else "all")
    export(library, Selection(), dest, fmt=fmt)
    return dest if fmt == "wacz" else dest / "archive" / "data.warc.gz"


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_tags_notes_and_collections_come_back_after_export_and_import(
    library: Library, tmp_path: Path, fmt: str
) -> None:
    source = _exported(library, tmp_path, fmt)
    with Library.open(tmp_path / "other", create=True) as other:
        report = import_paths(other, [source])
        [outcome] = report.outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        assert _without_ids(_rows(other)) == _without_ids(_rows(library))
        # good news, no problem: the app's "imported with notes" box does not open for it
        assert outcome.notes == [
            "its pages list gave back tags to 2 pages, notes to 1 page, 1 page to collection "
            "'research'"
        ]
        assert not any("gave back" in p for p in outcome.problems), outcome.problems
        assert import_notice(report) is None, outcome.problems
        found = {h.url for h in search(other, Query("harbour", prefix_last=False))}
        assert found == {HOME}
        found = {h.url for h in search(other, Query("gauge", prefix_last=False))}
        assert found == {TIDES}


def test_the_pages_list_carries_them_as_extra_fields(library: Library, tmp_path: Path) -> None:
    source = _exported(library, tmp_path, "wacz")
    with zipfile.ZipFile(source) as zf:
        lines = [json.loads(x) for x in zf.read("pages/pages.jsonl").splitlines()[1:]]
    by_url = {(p["url"], p["ts"]): p for p in lines}
    tides = by_url[(TIDES, "2024-05-06T01:11:22Z")]
    assert tides["tags"] == ["sea level"]
    assert tides["notes"] == "checked against the\ngauge data"
    assert tides["collection"] == "research"
    early = by_url[(HOME, "2024-05-06T01:10:14Z")]
    assert "tags" not in early and "notes" not in early and early["collection"] == "default"


def test_a_chosen_collection_takes_every_page_and_the_output_says_so(
    library: Library, tmp_path: Path
) -> None:
    source = _exported(library, tmp_path, "wacz")
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [source], collection="climate").outcomes
        rows = _rows(other)
        assert {r[3] for r in rows} == {"climate"}
        assert sum(bool(r[5]) for r in rows) == 2  # the tags and notes still come back
        assert (
            "its pages list names collections 'default', 'research': not used, every page "
            "went into 'climate' as asked (--collection)"
        ) in outcome.problems


def test_an_export_of_one_collection_imports_into_a_collection_of_its_name(
    library: Library, tmp_path: Path
) -> None:
    _labelled(library)
    dest = tmp_path / "research.wacz"
    export(library, Selection(collection="research"), dest)
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [dest]).outcomes
        assert outcome.folder is not None and outcome.folder.startswith("collections/research/")
        assert {r[3] for r in _rows(other)} == {"research"}


def _uids(lib: Library) -> list[tuple[str, str, str]]:
    """(url, time, uid) of every capture."""
    with lib.engine.connect() as conn:
        rows = conn.execute(text("SELECT url, captured_at, uid FROM snapshots")).all()
    return sorted((str(u), str(at), str(uid)) for u, at, uid in rows)


@pytest.mark.parametrize("fmt", ["wacz", "folder"])
def test_page_ids_survive_export_and_import(library: Library, tmp_path: Path, fmt: str) -> None:
    """Researchers cite a capture's id: an import into another library gave every page a new
    one. The id its listing carries is kept."""
    source = _exported(library, tmp_path, fmt)
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [source]).outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        assert _uids(other) == _uids(library)
        assert outcome.folder is not None  # named after its first page's id, as before
        assert outcome.folder.rsplit("/", 1)[1] in {u for *_, u in _uids(other)}
        assert not any("id" in p.split() for p in outcome.problems), outcome.problems


def test_a_page_id_already_taken_gets_a_new_one_and_the_output_says_so(
    library: Library, tmp_path: Path
) -> None:
    source = _exported(library, tmp_path, "wacz")
    with Library.open(tmp_path / "other", create=True) as other:
        _labelled(other)  # the same pages, other captures: given the exported ids
        with other.engine.begin() as conn:
            for url, at, uid in _uids(library):
                conn.execute(
                    text("UPDATE snapshots SET uid = :uid WHERE url = :url AND captured_at = :at"),
                    {"uid": uid, "url": url, "at": at},
                )
        assert _uids(other) == _uids(library)
        [outcome] = import_paths(other, [source], collection="again").outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        uids = [u for *_, u in _uids(other)]
        assert len(set(uids)) == len(uids) == 6
        assert any(
            "its pages list gives 3 pages an id another capture in this library already has" in p
            for p in outcome.problems
        ), outcome.problems


def test_only_ids_in_archivers_form_are_kept() -> None:
    """A uid starts with its capture time; another tool's page ids (UUIDs, random hex) would
    make ids that do not, so those pages get ids of their own."""
    from archiver_app.ids import new_snapshot_uid
    from archiver_app.importers.labels import _USABLE_ID

    assert _USABLE_ID.fullmatch(new_snapshot_uid(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)))
    assert _USABLE_ID.fullmatch("20240102T030405Z-3f9a1c0b")  # older libraries' 8 digits
    for foreign in ("3e6c0a1e-8f4e-4b8a-9d1f-2a6c9e0b7d11", "a1b2c3d4e5f6", "../x"):
        assert not _USABLE_ID.fullmatch(foreign)
