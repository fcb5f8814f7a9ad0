"""The main window's research actions: compare captures, the Changes view, copy a citation.

Kept apart from :mod:`archiver_app.gui.main_window` (already the largest module): this
installs its actions on the window's menus and opens its views as tabs. The work itself is
core (:mod:`archiver_app.compare`, :mod:`archiver_app.cite`) and runs on the op runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QMimeData, QObject
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from archiver_app.gui.errors import show_error
from archiver_app.gui.fitting import as_typed
from archiver_app.gui.message_bar import show_status_error
from archiver_app.gui.ops import BackgroundOp
from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.gui.changes_panel import ChangesPanel
    from archiver_app.gui.main_window import MainWindow

#: (menu text, format) of Edit > Copy Citation; the first is also Ctrl+Shift+C.
#: Copy Citation ▸'s entries: each label's access key (``&``) is its own in the menu.
CITATION_FORMATS = (
    ("&APA", "apa"),
    ("&Chicago", "chicago"),
    ("&MLA", "mla"),
    ("&BibTeX", "bibtex"),
    ("&RIS", "ris"),
    ("C&SL-JSON", "csl-json"),
    ("Robust &Link (HTML)", "robust-link"),
)


def _menu(window: MainWindow, title: str) -> QMenu:
    for action in window.menuBar().actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.title().replace("&", "") == title:
            return menu
    return window.menuBar().addMenu(title)


class ResearchActions(QObject):
    """Compare (Ctrl+D), Watch Pages…, Changes (Ctrl+Shift+H) and Copy Citation
    (Ctrl+Shift+C)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.compare_action = QAction("Com&pare Captures", window)
        self.compare_action.setShortcut(QKeySequence("Ctrl+D"))
        self.compare_action.setToolTip(
            "Two selected captures side by side with what changed; one selected: with the "
            "capture of the same address before it"
        )
        self.compare_action.triggered.connect(self.compare_selected)
        self.again_action = QAction("Capture A&gain…", window)
        self.again_action.setToolTip("Capture the selected captures' pages anew")
        self.again_action.triggered.connect(lambda _checked=False: self.capture_selected_again())
        self.watch_action = QAction("&Watch Pages…", window)
        self.watch_action.setToolTip(
            "Capture the selected captures' pages again on a schedule and compare each time"
        )
        self.watch_action.triggered.connect(self.watch_selected)
        self.changes_action = QAction("C&hanges", window)
        self.changes_action.setShortcut(QKeySequence("Ctrl+Shift+H"))
        self.changes_action.triggered.connect(self.show_changes)
        self.cite_menu = QMenu("Copy &Citation", window)
        self.cite_actions: list[QAction] = []
        for label, form in CITATION_FORMATS:
            action = self.cite_menu.addAction(label)
            action.triggered.connect(lambda _=False, f=form: self.copy_citation(f))
            self.cite_actions.append(action)
        self.cite_actions[0].setShortcut(QKeySequence("Ctrl+Shift+C"))
        for action in (self.compare_action, self.changes_action, *self.cite_actions):
            window.addAction(action)  # the keys work wherever the focus is in the window
        _menu(window, "Edit").addMenu(self.cite_menu)
        _menu(window, "View").insertAction(window.menus.view_panels_end, self.changes_action)
        _menu(window, "Capture").addAction(self.compare_action)
        _menu(window, "Capture").addAction(self.again_action)
        _menu(window, "Capture").addAction(self.watch_action)
        self.changes: ChangesPanel | None = None

    # ------------------------------------------------------------------ compare

    def compare_selected(self) -> QWidget | None:
        ids = self.window.selected_ids()
        if len(ids) == 1:
            from archiver_app.compare.changes import previous_capture

            # the one its change was measured against, else the one before it made any way
            lib = self.window.library
            before = previous_capture(lib, ids[0]) or previous_capture(lib, ids[0], same_way=False)
            if before is None:
                show_status_error(
                    self.window,
                    "This is the only complete capture of its address: nothing to compare.",
                )
                return None
            ids = [before, ids[0]]
        if len(ids) != 2:
            show_status_error(
                self.window,
                "Select one capture (compared with the one before it) or two to compare.",
            )
            return None
        return self.open_compare(ids[0], ids[1])

    def open_compare(self, old_id: int, new_id: int) -> QWidget:
        from archiver_app.gui.compare_view import CompareView

        window = self.window
        view = CompareView(window.library, old_id, new_id, window.runner, any_url=True)
        index = window.tabs.addTab(view, "Compare")
        window.tabs.setTabToolTip(index, f"Captures {old_id} and {new_id} compared")
        view.described.connect(lambda title, tip: self._name_tab(view, title, tip))
        window.tabs.setCurrentIndex(index)
        return view

    def _name_tab(self, view: QWidget, title: str, tip: str) -> None:
        """A Compare tab named by its page once the comparison knows it (if still open)."""
        index = self.window.tabs.indexOf(view)
        if index >= 0:
            self.window.tabs.setTabText(index, as_typed(title))
            self.window.tabs.setTabToolTip(index, tip)

    # ------------------------------------------------------------------ changes

    def watch_selected(self) -> QWidget:
        """The capture dialog on the selected captures' addresses, set to watch them daily."""
        return self.capture_selected_again(schedule="daily")

    def capture_selected_again(self, *, schedule: str | None = None) -> QWidget:
        """The capture dialog on the selected captures' addresses, in the browser profile
        they were captured in (a page behind a login stays so) and into their collection
        when they share one."""
        window = self.window
        data = window.selected_rows()
        urls = dict.fromkeys(rd.url for rd in data)
        profile = next((rd.profile for rd in data if rd.profile), None)
        collection = window.library.snapshots.shared_collection([rd.id for rd in data])
        return window.capture.open_dialog(
            "\n".join(urls), schedule=schedule, profile=profile, collection=collection
        )

    def refresh_changes(self) -> None:
        """Read the Changes view's lists again, if it is open."""
        if self.changes is not None and self.window.tabs.indexOf(self.changes) >= 0:
            self.changes.refresh()

    def watches_changed(self) -> None:
        """A watch was added, changed, paused or stopped, here or from a terminal: the
        Changes view and the detail pane's *Watched* line (schedule, next capture or
        "paused") read it again; they went on saying what it was until another row was
        selected."""
        self.refresh_changes()
        self.reload_detail()

    def reload_detail(self) -> None:
        detail = self.window.detail
        if detail.wanted is not None:  # what is typed in its notes and tags stays
            detail.show_snapshot(detail.wanted)

    def show_changes(self) -> ChangesPanel:
        from archiver_app.gui.changes_panel import ChangesPanel

        window = self.window
        if self.changes is not None and window.tabs.indexOf(self.changes) >= 0:
            self.changes.refresh()
        else:
            panel = ChangesPanel(window.library, window.runner)
            panel.compareRequested.connect(self.open_compare)
            panel.watchRequested.connect(lambda: window.capture.open_dialog(schedule="daily"))
            panel.captureNowRequested.connect(window.watches.run_now)
            panel.watchesChanged.connect(self.reload_detail)  # its own lists it reads itself
            self.changes = panel
            window.tabs.addTab(panel, "Changes")
        window.tabs.setCurrentWidget(self.changes)
        return self.changes

    # ------------------------------------------------------------------ citations

    def copy_citation(self, form: str) -> BackgroundOp[tuple[str, str | None]] | None:
        ids = self.window.selected_ids()
        if not ids:
            show_status_error(self.window, "Select the captures to cite.")
            return None
        library = self.window.library

        def work(_progress: object, _cancel: object) -> tuple[str, str | None]:
            from archiver_app.cite import FORMATS, citation, formatted, render

            refs = [citation(library, sid) for sid in ids]
            # a style's references also go as HTML: pasted into a word processor they
            # keep their italics
            rich = None if form in FORMATS else formatted(refs, form, as_html=True)
            return render(refs, form), rich

        def done(texts: tuple[str, str | None]) -> None:
            data = QMimeData()
            data.setText(texts[0])
            if texts[1] is not None:
                data.setHtml(texts[1].strip().replace("\n", "<br>\n"))
            QGuiApplication.clipboard().setMimeData(data)
            self.window.statusBar().showMessage(
                f"Copied the citation of {counted(len(ids), 'capture')} ({form}).", 6000
            )

        return (
            BackgroundOp(self.window.runner, work, label="citation", blocks_quit=False)
            .success(done)
            .failure(lambda f: show_error(self.window, f, "making the citation"))
            .run_in_background()
        )
