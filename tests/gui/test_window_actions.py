"""The main window's actions as a user meets them: menus, shortcuts and what they open.

Every action is triggered the way a click or a key does (``QAction.trigger``, which emits
``triggered(bool)``), not by calling the slot, so an action wired to a method that takes
an argument shows here.
"""

from __future__ import annotations

from collections import defaultdict

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from archiver_app.gui.capture_dialog import CaptureDialog
from archiver_app.gui.main_window import MainWindow


def _window_actions(window: MainWindow) -> list[QAction]:
    """Every action of the window: its own, its menus' (submenus too) and the table's."""
    seen: dict[int, QAction] = {}
    pending = [*window.actions(), *window.table.actions(), *window.menuBar().actions()]
    while pending:
        action = pending.pop()
        if id(action) in seen:
            continue
        seen[id(action)] = action
        menu = action.menu()
        if isinstance(menu, QMenu):
            pending.extend(menu.actions())
    return list(seen.values())


def _menu_actions(window: MainWindow) -> dict[str, list[QAction]]:
    """Each top-level menu's title (without the mnemonic) and its actions, submenus included."""
    menus: dict[str, list[QAction]] = {}
    for top in window.menuBar().actions():
        menu = top.menu()
        assert isinstance(menu, QMenu)
        found: list[QAction] = []
        pending = list(menu.actions())
        while pending:
            action = pending.pop(0)
            sub = action.menu()
            if isinstance(sub, QMenu):
                pending.extend(sub.actions())
            elif not action.isSeparator():
                found.append(action)
        menus[top.text().replace("&", "")] = found
    return menus


def test_no_two_actions_of_the_window_share_a_shortcut(main_window: MainWindow) -> None:
    owners: dict[str, list[str]] = defaultdict(list)
    for action in _window_actions(main_window):
        for key in action.shortcuts():
            if not key.isEmpty():
                text = key.toString(QKeySequence.SequenceFormat.PortableText)
                owners[text].append(action.text().replace("&", ""))
    clashes = {key: names for key, names in owners.items() if len(names) > 1}
    assert not clashes, f"shortcuts used by more than one action: {clashes}"


def test_each_menu_title_appears_once(main_window: MainWindow) -> None:
    titles = [a.text().replace("&", "") for a in main_window.menuBar().actions()]
    assert len(titles) == len(set(titles)), titles
    assert titles[:3] == ["File", "Edit", "View"]


def test_new_capture_from_the_menu_opens_an_empty_capture_dialog(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    main_window.menus.capture.trigger()  # what a click on File > New Capture… does
    dialogs = [d for d in main_window.findChildren(CaptureDialog) if d.isVisible()]
    assert len(dialogs) == 1
    assert dialogs[0].urls.toPlainText() == ""
    dialogs[0].reject()


def test_menus_group_their_actions_as_a_reader_expects(main_window: MainWindow) -> None:
    def names(title: str) -> list[str]:
        return [a.text().replace("&", "") for a in _menu_actions(main_window)[title]]

    view = names("View")
    assert view.index("Changes") < view.index("Full Screen"), view  # with the panels
    capture = names("Capture")
    assert capture[:2] == ["New Capture…", "Log In to a Site…"], capture
    assert capture.index("Open Replay") < capture.index("Compare Captures"), capture
    file = names("File")
    assert file.index("New Edition…") == file.index("Export…") + 1, file
    assert "Delete Captures…" in names("Edit") and "Verify Library…" in names("Tools")


def test_the_two_verify_commands_say_what_they_verify(main_window: MainWindow) -> None:
    """The drives panel's copy check and Tools > Verify Library… do different things; a
    bare "Verify" beside them left a reader to guess which."""
    library_check = main_window.verify.action.text().replace("&", "")
    copies_check = main_window.drives.verify_button.text().replace("&", "")
    assert library_check == "Verify Library…"
    assert copies_check != "Verify" and "Copies" in copies_check


def test_every_column_of_the_table_fits_the_window_as_it_first_opens(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    from archiver_app.gui.snapshot_model import COL_STATUS

    assert (main_window.width(), main_window.height()) == (1280, 800)
    header = main_window.table.horizontalHeader()
    status_left = header.sectionViewportPosition(COL_STATUS)
    qtbot.waitUntil(lambda: main_window.table.viewport().width() > 0)
    room = main_window.table.viewport().width() - status_left
    # "complete 200" beside a profile's mark (an icon of the table's icon size), with the
    # vertical scroll bar a library longer than the window shows
    need = 110 + main_window.table.iconSize().width()
    need += main_window.table.verticalScrollBar().sizeHint().width()
    assert room >= need, f"the Status column has {room}px of {need}: 'complete 200' is cut off"


def test_a_panel_behind_another_comes_to_the_front(qtbot: QtBot, main_window: MainWindow) -> None:
    """Jobs and Drives share one tabbed area: the Drives button brings Drives to the front
    even when Jobs is in front (it used to add Drives behind Jobs' tab, or close it), and
    the button of the panel in front closes it."""
    menus, w = main_window.menus, main_window
    front: dict[str, bool] = {}
    for name, dock in (("jobs", w.jobs_dock), ("drives", w.drives_dock)):
        dock.visibilityChanged.connect(lambda v, n=name: front.__setitem__(n, v))
    menus.jobs.trigger()
    qtbot.waitUntil(lambda: front.get("jobs") is True)
    assert menus.jobs.isChecked() and not menus.drives.isChecked()
    menus.drives.trigger()
    qtbot.waitUntil(lambda: front.get("drives") is True and front.get("jobs") is False)
    assert menus.drives.isChecked() and not menus.jobs.isChecked()
    assert not w.jobs_dock.isHidden()  # still open, behind the Drives tab
    menus.jobs.trigger()  # behind: to the front, not closed
    qtbot.waitUntil(lambda: front.get("jobs") is True)
    assert not w.jobs_dock.isHidden() and menus.jobs.isChecked()
    menus.jobs.trigger()  # in front: closed
    qtbot.waitUntil(w.jobs_dock.isHidden)
    assert not menus.jobs.isChecked()
