"""Start the desktop app: environment for QtWebEngine, the QApplication, the main window."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def prepare_environment() -> None:
    """Settings QtWebEngine reads before the QApplication exists."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")  # Chromium refuses root
    from archiver_app.gui.replay.schemes import register_schemes
    from archiver_app.gui.signals import guard_bool_refcount

    register_schemes()  # before the QApplication exists, as QtWebEngine requires
    guard_bool_refcount()  # PySide6 6.12 loses references to True (see gui/signals.py)


def run_gui(library_root: Path, database_url: str | None, *, self_test: bool = False) -> int:
    prepare_environment()
    if self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QMessageBox

    from archiver_app import __version__
    from archiver_app.errors import ArchiverError
    from archiver_app.gui.main_window import MainWindow
    from archiver_app.library import Library

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Archiver")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("Archiver")
    try:
        library = Library.open(library_root, create=True, database_url=database_url)
    except ArchiverError as exc:
        if self_test:
            print(f"self-test failed: {exc}", file=sys.stderr)
            return 1
        QMessageBox.critical(None, "Archiver cannot open the library", str(exc))
        return exc.exit_code
    window = MainWindow(library)
    window.show()
    if self_test:
        app.processEvents()
        ok = window.isVisible() and window.windowTitle().startswith("Archiver")
        window.close()
        library.close()
        print("self-test ok" if ok else "self-test failed: main window did not show")
        return 0 if ok else 1
    try:
        return app.exec()
    finally:
        library.close()
