"""Compare, Changes and Copy Citation from the main window, by their keys."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from archiver_app.gui.compare_view import CompareView
from archiver_app.gui.main_window import MainWindow
from archiver_app.library import Library
from tests.gui.test_compare_view import two_captures


def _select(window: MainWindow, ids: list[int]) -> None:
    from PySide6.QtCore import QItemSelectionModel

    sel = window.table.selectionModel()
    sel.clearSelection()
    for row in range(window.model.rowCount()):
        if window.model.snapshot_id(row) in ids:
            flags = (
                QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
            )
            sel.select(window.model.index(row, 0), flags)


def test_compare_changes_and_citations(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    old_id, new_id = two_captures(library)
    main_window.refresh_all()
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 2)
    research = main_window.research

    _select(main_window, [new_id])  # one capture: compared with the one before it
    research.compare_action.trigger()
    view = main_window.tabs.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    assert view.result is not None
    assert (view.result.comparison.old.id, view.result.comparison.new.id) == (old_id, new_id)

    main_window.tabs.setCurrentIndex(0)
    _select(main_window, [old_id, new_id])
    QGuiApplication.clipboard().clear()
    research.cite_actions[3].trigger()  # BibTeX
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text().count("@online{") == 2)
    assert "urn:archiver:" in QGuiApplication.clipboard().text()
    assert not QGuiApplication.clipboard().mimeData().hasHtml()  # a format: text alone
    QGuiApplication.clipboard().clear()
    research.cite_actions[0].trigger()  # APA: as text, and as HTML that keeps the italics
    clip = QGuiApplication.clipboard()
    qtbot.waitUntil(lambda: clip.mimeData() is not None and clip.mimeData().hasHtml())
    rich = clip.mimeData().html()
    assert rich.count("<br>") == 1 and "<i>" in rich
    assert "<i>" not in QGuiApplication.clipboard().text()

    research.changes_action.trigger()
    panel = main_window.tabs.currentWidget()
    assert panel is research.changes
    qtbot.waitUntil(lambda: panel.loaded)  # type: ignore[attr-defined]


def test_an_open_changes_view_reads_its_lists_again_when_a_job_ends(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    """A capture of a watched page made by hand is compared as its job ends: the Changes
    view, if open, shows it then (the Jobs panel says a job ended)."""
    panel = main_window.research.show_changes()
    reads: list[bool] = []
    panel.refresh = lambda: reads.append(True)  # type: ignore[method-assign]
    main_window.jobs.job_finished.emit(3, "indexed")
    assert reads == [True]
    main_window.tabs.removeTab(main_window.tabs.indexOf(panel))  # closed: not read
    main_window.jobs.job_finished.emit(4, "indexed")
    assert reads == [True]


def test_compare_of_a_watched_page_leaves_out_its_ignored_text_and_names_its_tab(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """The Compare view agrees with the Changes list (the watch's ignored text left out,
    and said so), shows the raw comparison on request, and its tab names the page."""
    from tests.unit.api.test_compare_with_watch_ignore import URL, _watched_pair

    watch, a, b = _watched_pair(library)
    view = main_window.research.open_compare(a, b)
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    summary = view.summary.text()
    assert "Text: 1 of 3 lines differ (33.3%)" in summary
    assert f"watch {watch}'s ignored patterns (^Count: \\d+$) is left out" in summary
    tabs = main_window.tabs
    index = tabs.indexOf(view)
    assert tabs.tabText(index) == "Compare: Notices"
    tip = tabs.tabToolTip(index)
    assert URL in tip and f"(capture {a})" in tip and f"(capture {b})" in tip

    assert not view.watch_ignore.isHidden() and view.watch_ignore.isChecked()
    view.watch_ignore.setChecked(False)  # the raw comparison
    qtbot.waitUntil(lambda: "Text: 2 of 4 lines differ" in view.summary.text(), timeout=30_000)
    assert "is left in" in view.summary.text()


def test_one_page_saved_while_browsing_is_compared_with_the_capture_just_before_it(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """Compare (Ctrl+D) on one capture: the capture its change is measured against (made
    the same way, docs/watch.md), else, for the first page browsed, the one before it."""
    from sqlalchemy import update

    from archiver_app.store.models import Snapshot

    old_id, new_id = two_captures(library)
    with library.write() as s:
        s.execute(
            update(Snapshot).where(Snapshot.id == new_id).values(provenance={"mode": "browse"})
        )
    main_window.refresh_all()
    qtbot.waitUntil(lambda: not main_window.model.loading and main_window.model.rowCount() == 2)
    _select(main_window, [new_id])
    main_window.research.compare_action.trigger()
    view = main_window.tabs.currentWidget()
    assert isinstance(view, CompareView)
    qtbot.waitUntil(lambda: view.result is not None, timeout=30_000)
    assert view.result is not None
    assert (view.result.comparison.old.id, view.result.comparison.new.id) == (old_id, new_id)
