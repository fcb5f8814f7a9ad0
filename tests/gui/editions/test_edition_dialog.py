"""File > New Edition…: a refusal keeps the dialog open with the reason; a good edition
opens in its view and joins the sidebar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from archiver_app.gui.edition_dialog import NewEditionDialog
from archiver_app.gui.edition_view import EditionView
from archiver_app.library import Library
from tests.unit.editions.memory_site import H, build


def test_new_edition_from_the_file_menu(
    qtbot: Any, library: Library, main_window: Any, tmp_path: Path
) -> None:
    build(library)
    window = main_window
    window.reload_sidebar()
    assert window.new_edition_action in window.menuBar().actions()[0].menu().actions()
    window.new_edition_action.trigger()
    dialog: NewEditionDialog = window.new_edition_dialog
    dialog.collection.setCurrentIndex(dialog.collection.findData("rivers"))
    dialog.year.setValue(2026)
    assert dialog.name.text() == "rivers-2026"

    bad = tmp_path / "bad.txt"
    bad.write_text("not a url\n", encoding="utf-8")
    dialog.targets.setText(str(bad))
    dialog.create_edition()
    qtbot.waitUntil(dialog.error.isVisible, timeout=10_000)
    assert "line 1" in dialog.error.text() and dialog.isVisible()
    assert library.editions.list() == []

    good = tmp_path / "urls.txt"
    good.write_text(f"{H}/listed\n", encoding="utf-8")
    dialog.targets.setText(str(good))
    dialog.create_edition()
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), EditionView), timeout=10_000)
    view = window.tabs.currentWidget()
    assert view.name == "rivers-2026" and not dialog.isVisible()
    assert "edition:rivers-2026" in [e.key for e in window.sidebar.entries()]
    urls = {t.url for t in library.editions.coverage("rivers-2026").targets}
    assert f"{H}/listed" in urls and f"{H}/a" in urls
    reads: list[bool] = []
    view.loaded.connect(lambda *_a: reads.append(True))
    qtbot.wait(300)  # its first reads are done
    reads.clear()
    window.jobs.job_finished.emit(1, "indexed")  # it follows the jobs that end
    qtbot.waitUntil(lambda: bool(reads), timeout=10_000)


def test_the_suggested_name_is_one_not_taken(qtbot: Any, library: Library, op_runner: Any) -> None:
    build(library)
    library.editions.create("rivers", "rivers-2025", year=2025)
    dialog = NewEditionDialog(library, op_runner, None, "rivers")
    qtbot.addWidget(dialog)
    dialog.year.setValue(2024)
    assert dialog.name.text() == "rivers-2024"
    dialog.year.setValue(2025)  # that year has an edition already
    assert dialog.name.text() == "rivers-2025-2"
