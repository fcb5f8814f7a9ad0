"""Start the desktop app: environment for QtWebEngine, the QApplication, the main window."""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from archiver_app.gui.collector import GuiCollector
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.ops import OpRunner
    from archiver_app.library import Library


def prepare_environment() -> None:
    """Settings QtWebEngine reads before the QApplication exists."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")  # Chromium refuses root
    from archiver_app.gui.replay.schemes import register_schemes

    register_schemes()  # before the QApplication exists, as QtWebEngine requires


def app_icon() -> QIcon:
    from PySide6.QtGui import QIcon

    path = Path(__file__).resolve().parents[2] / "resources" / "icons" / "archiver.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()


def run_gui(library_root: Path, database_url: str | None, *, self_test: bool = False) -> int:
    prepare_environment()
    if self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication, QDialog

    from archiver_app import __version__
    from archiver_app.errors import ArchiverError
    from archiver_app.gui.collector import GuiCollector
    from archiver_app.gui.first_run import FirstRunDialog, needs_first_run
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.ops import OpRunner
    from archiver_app.gui.settings_dialog import (
        APPEARANCE_KEY,
        BROWSER_KEY,
        apply_appearance,
        apply_browser_choice,
    )
    from archiver_app.library import Library

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Archiver")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("Archiver")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # the tray keeps the app alive
    collector = GuiCollector(app)  # from now on, cycles are collected on this thread only
    collector.take_over()
    settings = QSettings()
    apply_appearance(str(settings.value(APPEARANCE_KEY, "system") or "system"))
    apply_browser_choice(str(settings.value(BROWSER_KEY, "") or ""))
    runner = OpRunner(app)
    place = (
        StartPlace(library_root, False, True) if self_test else start_place(library_root, settings)
    )
    library_root, create, chose_default = place.root, place.create, place.chose
    if not self_test and chose_default and needs_first_run(settings):
        first = FirstRunDialog(library_root, runner, settings)
        if first.exec() != QDialog.DialogCode.Accepted:
            runner.shutdown(wait=False)
            return 0
        library_root, create = first.library_root, True
    if self_test:
        try:
            library = Library.open(library_root, create=True, database_url=database_url)
        except ArchiverError as exc:
            print(f"self-test failed: {exc}", file=sys.stderr)
            return 1
    else:
        opened = open_at_start(
            library_root, database_url, runner, settings, chose=chose_default, create=create
        )
        if isinstance(opened, int):
            runner.shutdown(wait=False)
            return opened
        library = opened
    window = MainWindow(library, runner=runner, settings=settings, icon=app_icon())
    window.show()
    announce_upgrade(window)
    QTimer.singleShot(0, collector.settle)
    if self_test:
        return _self_test(app, window, library, runner, collector)
    return _run_until_quit(app, window, library, runner, settings, database_url, collector)


@dataclass(frozen=True)
class StartPlace:
    root: Path
    chose: bool  # the app's own choice (the default, the remembered place), not a named one
    create: bool  # make a library there if there is none


def start_place(library_root: Path, settings: QSettings) -> StartPlace:
    """Where the app starts: ``library_root`` as the command line resolved it, or the
    library the app remembers. A remembered one is not made anew where it is gone (moved,
    deleted, on a drive not plugged in): an empty library in its place would read as
    everything lost; :func:`open_at_start` asks instead."""
    from archiver_app.gui.first_run import LIBRARY_KEY, needs_first_run
    from archiver_app.paths import LIBRARY_ENV, default_library_root, remembered_library_root

    # The place remembered for every front end (a moved library, one chosen in the app) is
    # the app's own choice too, not one named on the command line.
    from_memory = library_root == remembered_library_root()
    chose = not os.environ.get(LIBRARY_ENV) and (
        library_root == default_library_root() or from_memory
    )
    if not chose or needs_first_run(settings):
        return StartPlace(library_root, chose, create=True)
    remembered = settings.value(LIBRARY_KEY)
    if from_memory or not remembered:
        return StartPlace(library_root, True, create=not from_memory)
    return StartPlace(Path(str(remembered)), True, create=False)


def _self_test(
    app: QApplication,
    window: MainWindow,
    library: Library,
    runner: OpRunner,
    collector: GuiCollector,
) -> int:
    """The frozen build's check: the window shows, the cycle collector runs on the GUI
    thread only with the started app's objects set aside (:mod:`gui.collector`), and a
    background process starts, collecting as Python does."""
    from archiver_app.gui.shutdown import delete_all_windows

    app.processEvents()
    problem = ""
    if not (window.isVisible() and window.windowTitle().startswith("Archiver")):
        problem = "main window did not show"
    elif gc.isenabled() or not collector.timer.isActive():
        problem = "the cycle collector is not kept to the GUI thread"
    elif gc.get_freeze_count() == 0:
        problem = "the started app's objects were not set aside from the collector"
    else:
        from archiver_app.tasks.isolated import probe, run_isolated

        try:  # background work runs in child processes: can this build start one?
            child = run_isolated(probe, library)
            if child["pid"] == os.getpid():
                problem = "the background worker ran in the app's own process"
            elif not child["collects"]:
                problem = "the background worker does not collect cycles"
        except Exception as exc:
            problem = f"the background worker did not start: {exc}"
    if not problem:
        import tempfile

        from archiver_app.warc.workers import self_check

        try:  # imports read WARCs in a worker process: does it start in this build?
            with tempfile.TemporaryDirectory(prefix="archiver-self-test-") as tmp:
                if self_check(Path(tmp)) != 1:
                    problem = "the indexing worker read the wrong number of records"
        except Exception as exc:
            problem = f"the indexing worker did not start: {exc}"
    window.request_quit()
    runner.shutdown()
    library.close()
    delete_all_windows()
    print(f"self-test failed: {problem}" if problem else "self-test ok")
    return 1 if problem else 0


def _run_until_quit(  # noqa: PLR0917 - the app's own state, handed over once
    app: QApplication,
    window: MainWindow,
    library: Library,
    runner: OpRunner,
    settings: QSettings,
    database_url: str | None,
    collector: GuiCollector,
) -> int:
    """Run the event loop; when the window closed to move the library, move it and reopen
    the window wherever the library is afterwards; when it closed to open another library,
    open that one (the one before again if it cannot be opened)."""
    from PySide6.QtCore import QTimer

    from archiver_app.gui.main_window import MainWindow
    from archiver_app.gui.move_dialog import MoveDialog
    from archiver_app.gui.ops import OpRunner
    from archiver_app.gui.shutdown import delete_all_windows

    library_root = library.root
    while True:
        window.closed.connect(app.quit)
        try:
            code = app.exec()
        finally:
            move_to, open_next = window.pending_move, window.pending_open
            # a move needs every worker stopped; another library, its own workers
            runner.shutdown(wait=move_to is not None or open_next is not None)
            library.close()
        if move_to is None and open_next is None:
            delete_all_windows()
            return code
        window.deleteLater()
        if move_to is not None:
            runner = OpRunner(app)
            library_root = MoveDialog(
                library_root, move_to, runner, settings, database_url=database_url
            ).run()
            runner.shutdown(wait=True)
            reopened = open_library(library_root, database_url)
        else:
            assert open_next is not None
            reopened, database_url = open_next_library(
                open_next, library_root, database_url, settings
            )
        if reopened is None:
            return 1
        library, library_root = reopened, reopened.root
        runner = OpRunner(app)
        window = MainWindow(library, runner=runner, settings=settings, icon=app_icon())
        window.show()
        announce_upgrade(window)
        # the new window's objects, as at start; the old one's garbage collected first
        QTimer.singleShot(0, lambda: collector.settle(collect_first=True))


#: How long the status bar says that the library was upgraded as it opened (ms).
UPGRADE_NOTICE_MS = 60_000


def announce_upgrade(window: MainWindow) -> None:
    """Say in the status bar that opening the window's library upgraded its database, from
    which schema and where the copy taken first is (the command line says it on stderr)."""
    upgraded = window.library.upgraded
    if upgraded is not None:
        message = upgraded.message
        window.statusBar().showMessage(f"{message[0].upper()}{message[1:]}.", UPGRADE_NOTICE_MS)


def open_at_start(
    root: Path,
    database_url: str | None,
    runner: OpRunner,
    settings: QSettings,
    *,
    chose: bool,
    create: bool = True,
) -> Library | int:
    """The library the app starts on, or the exit code once the user gave up.

    A library the user named (``--library``, ``ARCHIVER_LIBRARY``, ``--database-url``) that
    cannot be opened is said in an error box. The remembered one (``chose``) reopens the
    first-run screen with the reason, so that a folder which stopped being usable (moved,
    unmounted, not a library) does not fail at every start. ``create``: make a library
    where the folder is empty or missing (not for a remembered one: an empty library in its
    place would read as everything lost)."""
    from PySide6.QtWidgets import QDialog, QMessageBox

    from archiver_app.errors import ArchiverError, LibraryBusyError
    from archiver_app.gui.errors import busy_box, describe, error_box
    from archiver_app.gui.first_run import FirstRunDialog
    from archiver_app.library import Library

    while True:
        try:
            return Library.open(root, create=create, database_url=database_url)
        except LibraryBusyError as exc:  # another process's long write: wait, not refuse
            if busy_box(exc).exec() != QMessageBox.StandardButton.Retry:
                return exc.exit_code
        except ArchiverError as exc:
            message, details = describe(exc)
            if not chose or database_url:
                error_box(None, "Archiver cannot open the library", message, details).exec()
                return exc.exit_code
            again = FirstRunDialog(root, runner, settings, problem=message)
            if again.exec() != QDialog.DialogCode.Accepted:
                return exc.exit_code
            root, create = again.library_root, True  # its verdict said what Start does


def open_next_library(
    chosen: Path, before: Path, database_url: str | None, settings: QSettings
) -> tuple[Library | None, str | None]:
    """After File > Open Library…: the chosen library (its own database), else, refused
    or failed (and said so), the one open before. Returns it and its database URL."""
    chosen_library = open_chosen_library(chosen, settings)
    if chosen_library is not None:
        return chosen_library, None  # the chosen library's own (its library.json)
    return open_library(before, database_url), database_url


def open_library(root: Path, database_url: str | None, *, create: bool = False) -> Library | None:
    """The library at ``root`` (``create``: a new one in an empty folder), or None once an
    error box said why it cannot be."""
    from archiver_app.errors import ArchiverError
    from archiver_app.gui.errors import describe, error_box
    from archiver_app.library import Library

    try:
        return Library.open(root, create=create, database_url=database_url)
    except ArchiverError as exc:
        message, details = describe(exc)
        title = (
            "Archiver cannot create the library" if create else "Archiver cannot open the library"
        )
        error_box(None, title, message, details).exec()
        return None


def open_chosen_library(root: Path, settings: QSettings) -> Library | None:
    """File > Open Library…'s folder: its library, or a new one where the folder is empty
    and the user agrees; remembered as the library to open next time (by the command line
    too). None when refused or failed (an error box said why)."""
    from PySide6.QtWidgets import QMessageBox

    from archiver_app.gui.first_run import LIBRARY_KEY
    from archiver_app.paths import remember_library_root

    empty = root.is_dir() and not any(root.iterdir())
    if empty:
        answer = QMessageBox.question(
            None,
            "Create a library?",
            f"{root} is empty. Create a new Archiver library there?",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return None
    library = open_library(root, None, create=empty)
    if library is not None:
        settings.setValue(LIBRARY_KEY, str(library.root))
        remember_library_root(library.root)
    return library
