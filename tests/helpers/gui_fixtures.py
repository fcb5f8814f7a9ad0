"""Fixtures for the Qt tests: a throw-away QSettings file and an operation runner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def collect_between_qt_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a test with Qt, the cycle collector runs after it, not during it.

    Run at any allocation, a pass during a GUI test meets Python wrappers of Qt objects
    and whatever the test's worker threads hold; a test process died in one (a
    segmentation fault in "Garbage-collecting" while the detail pane's thread read the
    database, once in a whole run; the object was not found). The app collects on its GUI
    thread only (``gui/collector.py``); tests build its windows without it, so here the
    collector runs once the test's windows, threads and library are gone (set up first,
    this is torn down last)."""
    if not {"qapp", "qtbot"} & set(request.fixturenames):
        yield
        return
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        if was_enabled:
            gc.enable()


@pytest.fixture
def gui_settings(tmp_path: Path) -> object:
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "gui-settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def op_runner(qapp: object, library: object) -> Iterator[object]:
    """An OpRunner whose threads are joined before the library fixture closes."""
    from archiver_app.gui.ops import OpRunner

    runner = OpRunner()
    try:
        yield runner
    finally:
        runner.shutdown(wait=True)


@pytest.fixture
def main_window(qtbot: object, library: object, op_runner: object, gui_settings: object) -> object:
    """A shown MainWindow over the test library (its ids already loaded)."""
    from archiver_app.gui.main_window import MainWindow

    window = MainWindow(library, runner=op_runner, settings=gui_settings)  # type: ignore[arg-type]
    left: list[str] = []

    def before_close(_: object) -> None:
        # pytest-qt closes the window before this fixture's teardown runs. Closing it with
        # work running asks "Quit Archiver?" in a modal box nobody answers (the run waits
        # for ever): wait for such work, else cancel it and say which after the close.
        for timer in (window.jobs.timer, window.drives.timer, window.status.timer):
            timer.stop()
        window.migrator.stop()
        window.watches.stop()
        busy = lambda: [op.label for op in op_runner.running() if op.blocks_quit]  # type: ignore[attr-defined]  # noqa: E731
        try:
            qtbot.waitUntil(lambda: not busy(), timeout=60_000)  # type: ignore[attr-defined]
        except Exception:
            left.extend(busy())
            op_runner.cancel_all()  # type: ignore[attr-defined]
            window.confirm_quit = lambda: True  # type: ignore[method-assign]

    qtbot.addWidget(window, before_close_func=before_close)  # type: ignore[attr-defined]
    window.show()
    qtbot.waitUntil(lambda: not window.model.loading)  # type: ignore[attr-defined]
    yield window
    assert not left, f"the test left work running: {left}"


def dispose(qtbot: Any, widget: Any) -> None:
    """Close ``widget`` and delete it the way Qt deletes (``deleteLater``), waiting until
    it is gone: a web view deleted at once (``shiboken6.delete``) while its page still had
    events queued could crash a later test, and one left to interpreter exit crashes there."""
    from PySide6.QtCore import QCoreApplication, QEvent

    gone: list[bool] = []
    widget.destroyed.connect(lambda: gone.append(True))
    widget.close()
    widget.deleteLater()
    # Outside an event loop a deferred delete waits for one at its level: run it here.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.waitUntil(lambda: bool(gone), timeout=10_000)


@pytest.fixture
def replay_tab(qtbot: Any, library: object) -> Iterator[Any]:
    """A shown replay tab over the test library, deleted (see :func:`dispose`) after."""
    from archiver_app.gui.replay.widget import ReplayWidget

    view = ReplayWidget(library)  # type: ignore[arg-type]
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    yield view
    dispose(qtbot, view)


def run_js(qtbot: Any, widget: Any, script: str) -> object:
    """The value of ``script`` run in the replay tab's page."""
    result: list[object] = []
    widget.page.runJavaScript(script, 0, result.append)
    qtbot.waitUntil(lambda: bool(result), timeout=10_000)
    return result[0]


@pytest.fixture
def opened_urls() -> Iterator[Any]:
    """What the app asks the desktop to open (``.urls``), caught at QDesktopServices' own
    seam for ``http`` instead of starting a browser."""
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    class OpenedUrls(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.urls: list[str] = []

        @Slot(QUrl)
        def open(self, url: QUrl) -> None:
            self.urls.append(url.toString())

    receiver = OpenedUrls()
    QDesktopServices.setUrlHandler("http", receiver, "open")
    try:
        yield receiver
    finally:
        QDesktopServices.unsetUrlHandler("http")


def answer_next_box(act: Any, seen: list[Any]) -> None:
    """Answer the next modal ``QMessageBox`` with ``act(box)`` once it is shown (the box
    runs its own event loop: the answer is posted before it opens); ``seen`` gets it."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        seen.append(box)
        act(box)

    QTimer.singleShot(0, answer)
