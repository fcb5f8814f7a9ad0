"""Every menu item has an access key (the letter after ``&``, Alt+letter on the menu bar,
the letter alone in an open menu), and no two items of one menu share one: Edit > Copy
Citation's formats (APA … Robust Link) had none, View's Jobs, Drives and Full Screen had
none, and in File, Export and New Edition, New Collection and Close Tab, Save Search and
Settings each shared a letter, so the letter went to the first of the two."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget
from pytestqt.qtbot import QtBot

from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.table_menu import table_menu
from archiver_app.library import Library
from tests.helpers.snapshots import add_snapshot


def access_key_faults(
    menu: QMenu | QMenuBar, where: str, names_of: QMenu | None = None
) -> list[str]:
    """What is wrong with the access keys of ``menu`` and of its submenus: an item without
    one, two items with the same. ``names_of``: a submenu whose entries are names a user
    gave (collections), where an ``&`` is a character, not an access key."""
    faults: list[str] = []
    seen: dict[str, str] = {}
    for action in menu.actions():
        if action.isSeparator() or not action.isVisible():
            continue
        name = f"{where} > {action.text().replace('&', '')}"
        key = QKeySequence.mnemonic(action.text()).toString()
        if not key:
            faults.append(f"{name}: no access key")
        elif key in seen:
            faults.append(f"{name} and {seen[key]}: both {key}")
        else:
            seen[key] = name
        sub = action.menu()
        if isinstance(sub, QMenu):
            if sub is names_of:
                last = sub.actions()[-1]  # below the names: New Collection…
                if not QKeySequence.mnemonic(last.text()).toString():
                    faults.append(f"{name} > {last.text()}: no access key")
            else:
                faults += access_key_faults(sub, name, names_of)
    return faults


def test_every_menu_item_has_an_access_key_of_its_own(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    window = main_window
    add_snapshot(library, "https://a.example/", title="A", tags=("ferry",))
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    faults = access_key_faults(window.menuBar(), "menu bar")

    flags = QItemSelectionModel.SelectionFlag
    window.table.selectionModel().select(window.model.index(0, 0), flags.Select | flags.Rows)
    menu = table_menu(window)  # the captures' right-click menu
    moves = menu.findChild(QMenu, "move_to_collection")
    faults += access_key_faults(menu, "captures menu", names_of=moves)
    menu.deleteLater()

    for kind in ("tag", "collection"):
        entry = next(e for e in window.sidebar.entries() if e.kind == kind)
        item = next(i for i, e in window.sidebar._entry_items() if e == entry)
        window.sidebar_menu._requested(window.sidebar.visualItemRect(item).center())
        sidebar_menu = window.sidebar_menu.menu
        assert sidebar_menu is not None
        faults += access_key_faults(sidebar_menu, f"sidebar {kind} menu")
        sidebar_menu.close()

    tray_menu = window.tray.icon.contextMenu()
    assert isinstance(tray_menu, QMenu)
    faults += access_key_faults(tray_menu, "tray menu")
    assert not faults, "\n".join(faults)


def test_the_citation_formats_each_answer_their_own_letter(main_window: MainWindow) -> None:
    cite = main_window.research.cite_menu
    keys = {a.text().replace("&", ""): QKeySequence.mnemonic(a.text()).toString()
            for a in cite.actions()}  # fmt: skip
    assert keys == {
        "APA": "Alt+A",
        "Chicago": "Alt+C",
        "MLA": "Alt+M",
        "BibTeX": "Alt+B",
        "RIS": "Alt+R",
        "CSL-JSON": "Alt+S",
        "Robust Link (HTML)": "Alt+L",
    }
    assert QKeySequence.mnemonic(cite.title()).toString() == "Alt+C"


def test_a_name_with_an_ampersand_shows_as_typed_in_menus_and_tabs(
    qtbot: QtBot, main_window: MainWindow, library: Library
) -> None:
    """A collection named R&D showed as "RD" in Move to Collection, its D underlined as an
    access key; a page titled "News & Events" lost its & in its replay tab the same way."""
    window = main_window
    add_snapshot(library, "https://a.example/", title="A")
    library.ensure_collection("r-d", "R&D")
    window.refresh_all()
    qtbot.waitUntil(lambda: not window.model.loading and window.model.rowCount() == 1)
    flags = QItemSelectionModel.SelectionFlag
    window.table.selectionModel().select(window.model.index(0, 0), flags.Select | flags.Rows)
    menu = table_menu(window)
    moves = menu.findChild(QMenu, "move_to_collection")
    assert isinstance(moves, QMenu)
    names = [a.text() for a in moves.actions() if not a.isSeparator()]
    assert "R&&D" in names and not QKeySequence.mnemonic("R&&D").toString()
    menu.deleteLater()

    page, compared = QWidget(), QWidget()
    for widget in (page, compared):
        window.tabs.addTab(widget, "…")
    window.tabs._retitle(page, "News & Events")  # the page's title, as it loads
    window.research._name_tab(compared, "Compare: Q&A", "")
    shown = [window.tabs.tabText(window.tabs.indexOf(w)) for w in (page, compared)]
    assert shown == ["News && Events", "Compare: Q&&A"]
    window.tabs._mark_deleted(page, True)
    assert window.tabs.tabToolTip(window.tabs.indexOf(page)).endswith("\nNews & Events")
    for widget in (page, compared):
        window.tabs.removeTab(window.tabs.indexOf(widget))
