"""The window's dialogs answer the keyboard: each has a default button (Return), Esc
closes it, and Tab walks through its fields from the top.

Each dialog is opened the way a user opens it (its action), not built by hand.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from archiver_app.api.integrity import IntegrityCode, VerifyFindings
from archiver_app.gui.login_dialog import LoginDialog
from archiver_app.gui.main_window import MainWindow
from archiver_app.gui.verify_dialog import VerifyResultsDialog
from archiver_app.library import Library

OPENERS: dict[str, Callable[[MainWindow], None]] = {
    "new capture": lambda w: w.menus.capture.trigger(),
    "log in to a site": lambda w: w.menus.login.trigger(),
    "export": lambda w: w.menus.export.trigger(),
    "new edition": lambda w: w.new_edition_action.trigger(),
    "settings": lambda w: w.menus.settings.trigger(),
}


def _open(window: MainWindow, qtbot: QtBot, name: str) -> QDialog:
    before = {id(d) for d in window.findChildren(QDialog) if d.isVisible()}
    OPENERS[name](window)
    found: list[QDialog] = []

    def opened() -> bool:
        found[:] = [
            d for d in window.findChildren(QDialog) if d.isVisible() and id(d) not in before
        ]
        return bool(found)

    qtbot.waitUntil(opened, timeout=5_000)
    return found[0]


def _label(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    shown = text() if callable(text) else ""
    return f"{type(widget).__name__} {widget.objectName() or shown!r}"


def _default_button(dialog: QDialog) -> QPushButton | None:
    return next((b for b in dialog.findChildren(QPushButton) if b.isDefault()), None)


@pytest.mark.parametrize("name", sorted(OPENERS))
def test_dialog_has_a_default_button_and_closes_on_escape(
    qtbot: QtBot, main_window: MainWindow, name: str
) -> None:
    dialog = _open(main_window, qtbot, name)
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    button = _default_button(dialog)
    assert button is not None, f"{name}: Return presses nothing"
    assert button.isEnabled(), f"{name}: the default button is disabled"
    focus = dialog.focusWidget() or dialog
    # Return where the dialog opens presses its default: a push button holding the focus
    # would take Return for itself (Settings opened the Move Library folder chooser)
    takes_return = [
        b
        for b in dialog.findChildren(QPushButton)
        if b is not button and b.autoDefault() and b.isVisibleTo(dialog)
        and not isinstance(b.parent(), QDialogButtonBox)  # Cancel there: Qt's own way
    ]  # fmt: skip
    assert not takes_return, f"{name}: {[b.text() for b in takes_return]} would take Return"
    QTest.keyClick(focus, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3_000)


def _tab_chain(dialog: QDialog, button: QPushButton) -> tuple[bool, list[tuple[str, int]]]:
    """Whether Tab reaches ``button``, and each field Tab stops at: its label and its top
    in the dialog. Plain values only: the walk makes Python wrappers of Qt's own inner
    widgets (a spin box's line edit, a combo box's view), and none may outlive this call,
    to be collected after Qt deleted what they wrap (the test process crashed so)."""
    chain: list[QWidget] = []
    widget: QWidget | None = dialog.nextInFocusChain()
    while widget is not None and widget is not dialog and len(chain) < 200:
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisibleTo(dialog):
            chain.append(widget)
        widget = widget.nextInFocusChain()
    reached = button in chain
    stops = [(_label(w), w.mapTo(dialog, QPoint(0, 0)).y()) for w in chain]
    del chain, widget
    gc.collect()  # any cycle through those wrappers goes now, while Qt's objects live
    return reached, stops


@pytest.mark.parametrize("name", sorted(OPENERS))
def test_tab_order_starts_in_the_dialog_and_reaches_its_default_button(
    qtbot: QtBot, main_window: MainWindow, name: str
) -> None:
    dialog = _open(main_window, qtbot, name)
    button = _default_button(dialog)
    assert button is not None
    reached, stops = _tab_chain(dialog, button)
    assert reached, f"{name}: Tab never reaches {button.text()!r}"
    # Tab goes down the dialog as it reads: each field is on the row of the one before or
    # below it (a field's own line edit, inside a spin box or a date, counts as its parent)
    backwards = [
        (stops[i - 1][0], stops[i][0])
        for i in range(1, len(stops))
        if stops[i][1] < stops[i - 1][1] - 12
    ]
    assert not backwards, f"{name}: Tab goes back up: " + ", ".join(
        f"{a} -> {b}" for a, b in backwards
    )
    dialog.reject()


def test_verify_results_close_on_escape_and_return(qtbot: QtBot, library: Library) -> None:
    findings = VerifyFindings(1, None, 3, {IntegrityCode.INTACT: 3}, ok=True, snapshots=())
    for key in (Qt.Key.Key_Escape, Qt.Key.Key_Return):
        dialog = VerifyResultsDialog(findings, library)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        QTest.keyClick(dialog.focusWidget() or dialog, key)
        qtbot.waitUntil(lambda d=dialog: not d.isVisible(), timeout=3_000)  # type: ignore[misc]


def test_the_login_dialog_has_no_empty_band_above_its_buttons(
    qtbot: QtBot, main_window: MainWindow
) -> None:
    dialog = _open(main_window, qtbot, "log in to a site")
    assert isinstance(dialog, LoginDialog)
    qtbot.waitExposed(dialog)
    top = dialog.open_button.mapTo(dialog, QPoint(0, 0)).y()
    gap = top - dialog.url.mapTo(dialog, QPoint(0, dialog.url.height())).y()
    assert gap < 60, f"{gap}px of nothing between the address field and the buttons"
    dialog.reject()
