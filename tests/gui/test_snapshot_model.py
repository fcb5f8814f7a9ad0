"""The captures table model: lazy ids, windowed rows, sort, search and filters."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from pytestqt.qtbot import QtBot

from archiver_app.api.table import Filters, SnapshotQuery, SortKey, View
from archiver_app.gui import snapshot_model as sm
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.snapshot_model import COL_SIZE, COL_TITLE, SnapshotTableModel
from archiver_app.library import Library
from archiver_app.search import quick
from archiver_app.search.stream import TableSearch
from tests.helpers.factories import bulk_snapshots
from tests.helpers.snapshots import add_snapshot


def _loaded(qtbot: QtBot, model: SnapshotTableModel, query: SnapshotQuery | None = None) -> None:
    if query is not None:
        model.set_query(query)
    else:
        model.refresh()
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)


def _db_ids(library: Library, sql: str) -> list[int]:
    conn = sqlite3.connect(library.db_path)
    try:
        return [r[0] for r in conn.execute(sql)]
    finally:
        conn.close()


def test_streams_ids_in_chunks_and_fetches_only_visible_pages(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    bulk_snapshots(library, 3000)
    model = SnapshotTableModel(library, op_runner)
    firsts: list[int] = []
    inserts: list[int] = []
    model.first_chunk.connect(lambda: firsts.append(model.rowCount()))
    model.rowsInserted.connect(lambda _p, first, last: inserts.append(last - first + 1))
    _loaded(qtbot, model)
    assert model.rowCount() == 3000
    assert firsts == [sm.FIRST_CHUNK]  # the first chunk paints before the rest arrives
    assert sum(inserts) == 3000 - sm.FIRST_CHUNK
    expected = _db_ids(library, "SELECT id FROM snapshots ORDER BY captured_at DESC, id DESC")
    assert [model.snapshot_id(r) for r in range(3000)] == expected
    assert list(model._pages) == [0]  # the first page came with the first chunk, no more
    title = model.data(model.index(2999, COL_TITLE))
    row = _db_ids(library, f"SELECT id FROM snapshots WHERE id = {expected[-1]}")
    assert row and title
    assert list(model._pages) == [0, 2999 // sm.PAGE]


def test_sort_by_each_column_matches_the_database(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    bulk_snapshots(library, 600)
    model = SnapshotTableModel(library, op_runner)
    _loaded(qtbot, model)
    from PySide6.QtCore import Qt

    model.sort(COL_SIZE, Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: not model.loading and model.rowCount() == 600)
    assert model.query.sort is SortKey.SIZE and not model.query.descending
    sizes = [model.row_data(r).size_bytes for r in range(600)]  # type: ignore[union-attr]
    assert sizes == sorted(sizes)
    model.sort(COL_TITLE, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: not model.loading and model.rowCount() == 600)
    expected = _db_ids(library, "SELECT id FROM snapshots ORDER BY title DESC, id DESC")
    assert [model.snapshot_id(r) for r in range(600)] == expected


def test_search_filters_and_views(qtbot: QtBot, library: Library, op_runner: OpRunner) -> None:
    now = datetime.now(UTC)
    river = add_snapshot(
        library,
        "https://river.example/flood",
        title="Flood report",
        body="the river rose",
        tags=("water",),
    )
    add_snapshot(library, "https://city.example/budget", title="City budget", body="taxes")
    failed = add_snapshot(
        library,
        "https://news.example.org/x",
        title="Gone",
        state="failed",
        captured_at=now - timedelta(days=30),
    )
    model = SnapshotTableModel(library, op_runner)
    _loaded(qtbot, model, SnapshotQuery(search="rive"))  # prefix while typing
    assert [model.snapshot_id(r) for r in range(model.rowCount())] == [river]
    model.data(model.index(0, sm.COL_TITLE))  # paint the row: snippets load behind it
    qtbot.waitUntil(
        lambda: "<b>river</b>" in model.data(model.index(0, sm.COL_MATCH), sm.SnippetRole)
    )
    assert model.data(model.index(0, sm.COL_MATCH)) == "the <b>river</b> rose"
    _loaded(qtbot, model, SnapshotQuery(search='river" AND NEAR(x'))  # no FTS injection
    assert model.rowCount() == 0
    _loaded(qtbot, model, SnapshotQuery(search="flood -river"))  # the CLI's search syntax
    assert model.rowCount() == 0
    _loaded(qtbot, model, SnapshotQuery(search="budget OR flood "))
    assert model.rowCount() == 2
    _loaded(qtbot, model, SnapshotQuery(view=View.FAILED))
    assert [model.snapshot_id(0)] == [failed] and model.rowCount() == 1
    _loaded(qtbot, model, SnapshotQuery(view=View.RECENT))
    assert model.rowCount() == 2
    _loaded(qtbot, model, SnapshotQuery(view=View.UNTAGGED))
    assert river not in {model.snapshot_id(r) for r in range(model.rowCount())}
    _loaded(qtbot, model, SnapshotQuery(filters=Filters(domain="example.org")))
    assert [model.snapshot_id(0)] == [failed] and model.rowCount() == 1
    _loaded(qtbot, model, SnapshotQuery(filters=Filters(tag="water")))
    assert model.rowCount() == 1 and model.snapshot_id(0) == river
    _loaded(qtbot, model, SnapshotQuery(filters=Filters(date_to=now - timedelta(days=1))))
    assert model.rowCount() == 1 and model.snapshot_id(0) == failed
    # The filters compile as ranked search's do (search.engine.filter_clauses).
    _loaded(qtbot, model, SnapshotQuery(filters=Filters(state="failed", mime="text/")))
    assert model.rowCount() == 1 and model.snapshot_id(0) == failed
    _loaded(qtbot, model, SnapshotQuery(filters=Filters(mime="application/pdf")))
    assert model.rowCount() == 0
    early = Filters(date_from=now - timedelta(days=60))  # the later start wins: Recent's
    _loaded(qtbot, model, SnapshotQuery(view=View.RECENT, filters=early))
    assert model.rowCount() == 2 and failed not in {model.snapshot_id(r) for r in range(2)}


def test_search_with_many_matches_shows_newest_first_then_completes(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    bulk_snapshots(library, 1500)
    conn = sqlite3.connect(library.db_path)
    conn.execute(
        "INSERT INTO snapshot_fts(rowid, title, url, body, tags) "
        "SELECT id, title, url, '', '' FROM snapshots"
    )
    conn.commit()
    conn.close()
    expected = _db_ids(
        library,
        "SELECT id FROM snapshots WHERE id IN (SELECT rowid FROM snapshot_fts WHERE "
        "snapshot_fts MATCH 'example') ORDER BY captured_at DESC, id DESC",
    )
    assert len(expected) == 1500
    model = SnapshotTableModel(library, op_runner)
    windows: list[tuple[int, bool]] = []
    model.first_chunk.connect(lambda: windows.append((model.rowCount(), model.partial)))
    _loaded(qtbot, model, SnapshotQuery(search="example"))
    assert windows[0] == (sm.FIRST_CHUNK, True)  # quick window, flagged partial
    assert windows[-1] == (1500, False)
    assert [model.snapshot_id(r) for r in range(1500)] == expected


def test_snippets_show_the_match_near_their_start_and_cut_at_words(library: Library) -> None:
    text = " ".join(f"word{i}" for i in range(200)) + " the Flood\nwarning <x> " + "tail " * 50
    sid = add_snapshot(library, "https://a.example/", title="Title", body=text)
    short = add_snapshot(library, "https://b.example/", title="Title", body="flood at the start")
    add_snapshot(library, "https://c.example/", title="Title", body="nothing here")
    with library.engine.connect() as conn:
        found = TableSearch().snippets(conn, [sid, short, sid + 99], "floo")
    snip = found[sid]
    # the narrow Match column shows the first ~50 characters: the match is among them
    assert snip.index("<b>Flood</b>") < 40, snip
    assert snip.startswith("…word") and snip.endswith("…")
    assert "&lt;x&gt;" in snip  # page text is escaped: only the marks are HTML
    words = snip.strip("…").split()
    assert all(w in text.split() for w in words if "<b>" not in w and "&" not in w)
    assert found[short] == "<b>flood</b> at the start"
    assert set(found) == {sid, short}  # no match, no snippet
    # One builder for the table and search-as-you-type: the same terms, the same marks.
    assert quick.snippet("the Flood", quick.terms_of('"flo"*'), ("[", "]")) == "the [Flood]"


def test_the_match_column_shows_matches_in_addresses_and_after_folded_characters(
    library: Library,
) -> None:
    """The Match column was empty for a word the index found: one far into a page whose text
    has a character that Unicode folds to several (``…``, ``ﬁ``), and it split an address at the
    match (``https:// <b>tides</b>.example``)."""
    long = "Latest news… " + "word " * 300 + "the harbour crane"
    far = add_snapshot(library, "https://a.example/", title="News", body=long)
    url = "https://tides.example/harbour-tables.html"
    addr = add_snapshot(library, url, title="Port", body="nothing")
    liga = add_snapshot(library, "https://c.example/", title="C", body="the ﬁnal harbour…")
    with library.engine.connect() as conn:
        found = TableSearch().snippets(conn, [far, addr, liga], "harb")
        tides = TableSearch().snippets(conn, [addr], "tid")
    assert found[far] == "…word word the <b>harbour</b> crane"  # three words before
    assert found[addr] == "https://tides.example/<b>harbour</b>-tables.html"
    assert found[liga] == "the ﬁnal <b>harbour</b>…"
    assert tides[addr] == "https://<b>tides</b>.example/harbour-tables.html"
    # Marked as the index matches: a ligature is one character of its own (``ﬁnal`` is not
    # ``final``), a circled letter is no letter (SQLite's unicode61 tokenizer)
    assert quick.snippet("the ﬁnal cut", quick.terms_of('"ﬁnal"'), ("[", "]")) == "the [ﬁnal] cut"
    assert quick.snippet("the ﬁnal cut", quick.terms_of('"final"'), ("[", "]")) == "the ﬁnal cut"
    # A letter and its accent written apart (``e`` + U+0301) fold as one; the accent stays
    # inside the mark (a mark between them draws the accent alone).
    apart = quick.snippet("le cafe\u0301 ouvert", quick.terms_of('"cafe"'), ("[", "]"))
    assert apart == "le [cafe\u0301] ouvert"
    assert quick.snippet("\u24b7ig \u24b7oat", quick.terms_of('"oa"*'), ("[", "]")) == (
        "\u24b7ig \u24b7[oat]"
    )
    # Greek keeps its accents, as the index does
    greek = quick.terms_of('"αθηνα"')
    assert quick.snippet("στην Αθήνα σήμερα", greek, ("[", "]")) == "στην Αθήνα σήμερα"


def test_newest_matches_agree_with_the_index(library: Library) -> None:
    bulk_snapshots(library, 3000)
    conn = sqlite3.connect(library.db_path)
    conn.execute(
        "INSERT INTO snapshot_fts(rowid, title, url, body, tags) "
        "SELECT id, title, url, '', '' FROM snapshots"
    )
    conn.commit()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    search = TableSearch()
    try:
        # Short prefixes: the newest pages are checked (search.quick), not the index.
        for text in ("sit", "site", "exam", "climate riv", "Muse"):
            sql, params = search.newest_matches_sql(text, 101)
            by_index = [r[0] for r in conn.execute(sql, params)]
            assert len(by_index) == 101, text
            statements.clear()
            assert search.newest_matches(conn.cursor(), text, 101) == by_index, text
            assert not any("LIMIT 101" in s for s in statements), (text, statements)
        # Rare words, whole words, phrases and operators are left to the index.
        for text in ("site42", "climate ", '"climate river"', "climate OR riv", "Museu"):
            sql, params = search.newest_matches_sql(text, 101)
            expected = [r[0] for r in conn.execute(sql, params)]
            statements.clear()
            assert search.newest_matches(conn.cursor(), text, 101) == expected, text
            assert any("LIMIT 101" in s for s in statements), text
    finally:
        conn.close()


def test_a_refresh_after_shutdown_is_ignored(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    # A job that finishes while the window closes still asks the table to refresh.
    bulk_snapshots(library, 50)
    model = SnapshotTableModel(library, op_runner)
    _loaded(qtbot, model)
    model.shutdown()
    model.refresh()  # raised "cannot schedule new futures after shutdown"
    assert model.rowCount() == 50 and not model.loading


def test_a_model_deleted_while_reading_ends_its_reader_threads_first(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """Dropped without shutdown (a test, a window gone): its readers stop and are joined
    as it goes, before the relay they emit on is deleted; none is left waiting for a model
    that will never take its next chunk."""
    import time

    import shiboken6

    bulk_snapshots(library, 3000)
    model = SnapshotTableModel(library, op_runner)
    readers = model._readers
    model.refresh()
    time.sleep(0.5)  # no events: the reader has handed over its first chunk and waits
    threads = list(readers.pool._threads)
    assert threads and any(t.is_alive() for t in threads)
    shiboken6.delete(model)
    assert readers.cancel.cancelled
    assert not any(t.is_alive() for t in threads)


def test_titles_stay_in_one_column_with_or_without_a_thumbnail(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """A capture with no screenshot (an imported WARC) gets a blank of the thumbnail's
    size, as does one whose thumbnail is still being decoded: its title is not shifted."""
    from PySide6.QtGui import QPixmap

    from archiver_app.gui.thumbnails import SMALL, ThumbnailCache

    shot = add_snapshot(library, "https://a.example/", title="With", screenshot=True)
    bare = add_snapshot(library, "https://b.example/", title="Without", screenshot=False)
    thumbnails = ThumbnailCache(library)
    model = SnapshotTableModel(library, op_runner, thumbnails=thumbnails)
    _loaded(qtbot, model)
    rows = {model.snapshot_id(r): r for r in range(model.rowCount())}

    def decoration(sid: int) -> QPixmap:
        value = model.data(model.index(rows[sid], COL_TITLE), sm.DECORATION)
        assert isinstance(value, QPixmap)
        return value

    assert decoration(shot).size() == decoration(bare).size() == SMALL  # blank while decoded
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.has(shot) and thumbnails.has(bare))
    assert (
        decoration(bare).size() == SMALL
        and decoration(bare).toImage().pixelColor(0, 0).alpha() == 0
    )
    assert decoration(shot) is not thumbnails.blank and not decoration(shot).isNull()


def test_a_white_page_thumbnail_is_framed(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """Most pages are white at the top: their thumbnail drawn as it is read as an empty cell
    with a few specks. A small thumbnail has a grey line along its edge."""
    from PIL import Image
    from sqlalchemy import select

    from archiver_app.gui.thumbnails import FRAME, ThumbnailCache
    from archiver_app.store.models import Snapshot

    sid = add_snapshot(library, "https://white.example/", title="White", screenshot=True)
    with library.session() as s:
        folder = s.scalar(select(Snapshot.folder).where(Snapshot.id == sid))
    Image.new("RGB", (1280, 800), "white").save(library.root / folder / "screenshot.png")
    thumbnails = ThumbnailCache(library)
    assert thumbnails.small(sid, folder) is None  # decoding
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.has(sid))
    pixmap = thumbnails.small(sid, folder)
    assert pixmap is not None
    image = pixmap.toImage()
    w, h = image.width(), image.height()
    edge = [(0, h // 2), (w - 1, h // 2), (w // 2, 0), (w // 2, h - 1)]
    assert all(image.pixelColor(x, y).rgb() == FRAME.rgb() for x, y in edge)
    assert image.pixelColor(w // 2, h // 2).name() == "#ffffff"


def test_a_screenshot_written_after_its_row_was_shown_becomes_its_thumbnail(
    qtbot: QtBot, library: Library
) -> None:
    """A capture's row is shown while it is pending, before its screenshot exists; once the
    screenshot is written, the row shown again gets its thumbnail (it stayed blank until
    the app was restarted)."""
    from PIL import Image
    from sqlalchemy import select

    from archiver_app.gui.thumbnails import ThumbnailCache
    from archiver_app.store.models import Snapshot

    sid = add_snapshot(library, "https://later.example/", title="Later", screenshot=False)
    with library.session() as s:
        folder = s.scalar(select(Snapshot.folder).where(Snapshot.id == sid))
    thumbnails = ThumbnailCache(library)
    thumbnails.retry_seconds = 0.2
    assert thumbnails.small(sid, folder) is None
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.has(sid))
    assert thumbnails.small(sid, folder) is None  # none to be had yet
    (library.root / folder).mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (1280, 800), "navy").save(library.root / folder / "screenshot.png")
    qtbot.wait(300)
    thumbnails.small(sid, folder)  # shown again: looked for again
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.small(sid, folder) is not None)


def test_a_capture_completed_while_listed_gets_its_thumbnail_when_the_rows_are_read_anew(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    """A capture listed while pending has no screenshot yet; the table reading its rows
    anew once it is complete (the capture's own refresh, F5) shows its thumbnail at once
    (the screenshot not found before was remembered as none: the thumbnail stayed blank
    when the refresh came soon after the row was first shown)."""
    from PIL import Image
    from PySide6.QtGui import QPixmap
    from sqlalchemy import select

    from archiver_app.gui.thumbnails import ThumbnailCache
    from archiver_app.store.models import Snapshot

    sid = add_snapshot(
        library, "https://later.example/", title="Later", state="pending", screenshot=False
    )
    thumbnails = ThumbnailCache(library)
    thumbnails.retry_seconds = 3600  # not the timed retry: the rows read anew
    model = SnapshotTableModel(library, op_runner, thumbnails=thumbnails)
    _loaded(qtbot, model)

    def decoration() -> QPixmap:
        value = model.data(model.index(0, COL_TITLE), sm.DECORATION)
        assert isinstance(value, QPixmap)
        return value

    assert decoration() is thumbnails.blank
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: thumbnails.has(sid))
    assert decoration() is thumbnails.blank  # none to be had yet
    with library.write() as s:
        snapshot = s.scalars(select(Snapshot).where(Snapshot.id == sid)).one()
        snapshot.state = "complete"
        folder = library.root / snapshot.folder
    Image.new("RGB", (1280, 800), "navy").save(folder / "screenshot.png")
    _loaded(qtbot, model)
    decoration()  # the row painted again
    thumbnails.wait_idle()
    qtbot.waitUntil(lambda: decoration() is not thumbnails.blank)
