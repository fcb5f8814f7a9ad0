"""The capture dialog: one URL, many URLs, a bookmarks file, or a crawl.

The dialog only builds a checked :class:`~archiver_app.gui.capture_input.CaptureRequest`
(bad lines are listed, nothing typed is dropped silently); the main window runs it through
the core capture/crawl API. When the build lacks that API the Capture button stays disabled
with a tooltip that says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayoutItem,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from archiver_app.api.jobs import DEFAULT_DEPTH, DEFAULT_MAX_PAGES, DEFAULT_SCOPE
from archiver_app.errors import InputError
from archiver_app.gui.capture_input import (
    SCHEDULES,
    SCOPES,
    CaptureRequest,
    CrawlOptions,
    Rejected,
    build_request,
    parse_bookmarks_file,
    parse_ignore_patterns,
    parse_url_lines,
)
from archiver_app.validation import slug_of

TAB_URLS, TAB_BOOKMARKS, TAB_CRAWL = range(3)


def _align_labels(*forms: QFormLayout) -> None:
    """One label width for the forms stacked in the dialog, so their fields line up."""
    labels = [
        label
        for form in forms
        for row in range(form.rowCount())
        if isinstance(item := form.itemAt(row, QFormLayout.ItemRole.LabelRole), QLayoutItem)
        and isinstance(label := item.widget(), QLabel)
    ]
    width = max((label.sizeHint().width() for label in labels), default=0)
    for label in labels:
        label.setMinimumWidth(width)


def collection_chooser(
    parent: QWidget, collections: list[tuple[str, str]], default: str
) -> QComboBox:
    """The collections ``(slug, name)`` to choose from, ``default`` chosen; a new one's
    name may be typed (:func:`chosen_collection`)."""
    box = QComboBox(parent)
    box.setObjectName("collection")
    box.setEditable(True)
    for slug, name in collections or [("default", "Default")]:
        box.addItem(name, slug)
    box.setCurrentIndex(max(0, box.findData(default)))
    return box


def chosen_collection(box: QComboBox) -> tuple[str, str]:
    """``(slug, name)`` of what a :func:`collection_chooser` shows: a collection listed (by
    its name, in any case; ``name`` empty), else a new one by the name typed (the item
    chosen before typing is not what is meant)."""
    typed = " ".join(box.currentText().split())
    listed = box.findText(typed, Qt.MatchFlag.MatchFixedString) if typed else -1
    name = "" if listed >= 0 or not typed else typed
    if listed >= 0:
        return str(box.itemData(listed)), name
    return (slug_of(typed) if typed else "default"), name


def profile_chooser(parent: QWidget, profiles: list[str] | None, chosen: str | None) -> QComboBox:
    """No profile (a fresh browser) or one of ``profiles`` (logged in), ``chosen`` chosen."""
    box = QComboBox(parent)
    box.setObjectName("capture_profile")
    box.addItem("None: a fresh browser, not logged in", None)
    for name in profiles or []:
        box.addItem(f"{name} (logged in; may capture private data)", name)
    box.setToolTip("A browser profile you logged in with (Capture > Log In to a Site…)")
    box.setCurrentIndex(max(0, box.findData(chosen)))
    return box


class CaptureDialog(QDialog):
    """Collects a :class:`CaptureRequest`; read it from :attr:`request` after ``accept``."""

    # Long: a Qt form laid out top to bottom, one widget after another, reads best whole.
    def __init__(
        self,
        collections: list[tuple[str, str]],
        parent: QWidget | None = None,
        *,
        initial_text: str = "",
        default_collection: str = "default",
        profiles: list[str] | None = None,
        schedule: str | None = None,
        profile: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("capture_dialog")
        self.setWindowTitle("Capture")
        self.resize(640, 520)
        self.request: CaptureRequest | None = None
        self._bookmark_urls: list[str] = []
        self._bookmark_rejected: list[Rejected] = []
        layout = QVBoxLayout(self)

        self.tabs = QTabWidget(self)
        # One or many URLs
        urls_page = QWidget(self.tabs)
        urls_layout = QVBoxLayout(urls_page)
        urls_layout.addWidget(QLabel("Web addresses to capture, one per line:", urls_page))
        self.urls = QPlainTextEdit(urls_page)
        self.urls.setTabChangesFocus(True)  # Tab moves on: a list has no tabs
        self.urls.setObjectName("urls")
        self.urls.setPlaceholderText("https://example.org/page\nhttps://example.org/other")
        self.urls.setPlainText(initial_text)
        urls_layout.addWidget(self.urls)
        self.tabs.addTab(urls_page, "Addresses")
        # Bookmarks file
        bm_page = QWidget(self.tabs)
        bm_layout = QVBoxLayout(bm_page)
        bm_layout.addWidget(
            QLabel("A bookmarks export (HTML or JSON from any browser) or a text file.", bm_page)
        )
        row = QHBoxLayout()
        self.bookmarks_path = QLineEdit(bm_page)
        self.bookmarks_path.setObjectName("bookmarks_path")
        self.bookmarks_path.setReadOnly(True)
        browse = QPushButton("Choose File…", bm_page)
        browse.clicked.connect(self._choose_bookmarks)
        row.addWidget(self.bookmarks_path, 1)
        row.addWidget(browse)
        bm_layout.addLayout(row)
        self.bookmarks_summary = QLabel(bm_page)
        self.bookmarks_summary.setWordWrap(True)
        bm_layout.addWidget(self.bookmarks_summary)
        bm_layout.addStretch(1)
        self.tabs.addTab(bm_page, "Bookmarks file")
        # Crawl
        crawl_page = QWidget(self.tabs)
        crawl_form = QFormLayout(crawl_page)
        self.seed = QLineEdit(crawl_page)
        self.seed.setObjectName("seed")
        self.seed.setPlaceholderText("https://example.org/")
        self.scope = QComboBox(crawl_page)
        for key, label in SCOPES.items():
            self.scope.addItem(label, key)
        self.scope.setCurrentIndex(self.scope.findData(DEFAULT_SCOPE))
        self.depth_spin = QSpinBox(crawl_page)
        self.depth_spin.setRange(0, 50)
        self.depth_spin.setValue(DEFAULT_DEPTH)
        self.page_limit = QSpinBox(crawl_page)
        self.page_limit.setRange(1, 1_000_000)
        self.page_limit.setValue(DEFAULT_MAX_PAGES)
        self.concurrency = QSpinBox(crawl_page)
        self.concurrency.setRange(1, 16)
        self.concurrency.setValue(2)
        self.ignore = QPlainTextEdit(crawl_page)
        self.ignore.setTabChangesFocus(True)  # Tab moves on: a list has no tabs
        self.ignore.setObjectName("ignore")
        self.ignore.setPlaceholderText("regular expressions, one per line, e.g. /calendar/")
        self.ignore.setMaximumHeight(80)
        self.user_agent = QLineEdit(crawl_page)
        self.user_agent.setPlaceholderText("the browser's own")
        crawl_form.addRow("Start at", self.seed)
        crawl_form.addRow("Scope", self.scope)
        crawl_form.addRow("Depth", self.depth_spin)
        crawl_form.addRow("Page limit", self.page_limit)
        crawl_form.addRow("Concurrency", self.concurrency)
        crawl_form.addRow("Ignore", self.ignore)
        crawl_form.addRow("User agent", self.user_agent)
        self.tabs.addTab(crawl_page, "Crawl a site")
        layout.addWidget(self.tabs, 1)

        common = QGroupBox("Save into", self)
        common_form = QFormLayout(common)
        self.collection = collection_chooser(common, collections, default_collection)
        self.tags = QLineEdit(common)
        self.tags.setObjectName("capture_tags")
        self.tags.setPlaceholderText("tags, separated by commas")
        self.profile = profile_chooser(common, profiles, profile)
        self.keep_login_pages = QCheckBox("Keep pages that look like a login form", common)
        self.keep_login_pages.setObjectName("keep_login_pages")
        self.keep_login_pages.setToolTip(
            "A page showing a password field is failed as a login wall; check this to capture "
            "a public page that only looks like one (a password-strength demo)"
        )
        common_form.addRow("Collection", self.collection)
        common_form.addRow("Tags", self.tags)
        common_form.addRow("Browser profile", self.profile)
        common_form.addRow("", self.keep_login_pages)
        layout.addWidget(common)
        watch = QGroupBox("Watch", self)
        watch_form = QFormLayout(watch)
        self._watch_rows(watch, watch_form, schedule)
        _align_labels(common_form, watch_form)
        layout.addWidget(watch)

        self.problems = QLabel(self)
        self.problems.setObjectName("problems")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: palette(highlight);")
        layout.addWidget(self.problems)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.capture_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self._schedule_changed()  # the button's label: Capture, or Capture and Watch
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def _watch_rows(self, common: QWidget, form: QFormLayout, schedule: str | None) -> None:
        """The rows of a watch: when to capture again (each new capture is compared with
        the one before) and the text its comparisons leave out."""
        self.schedule = QComboBox(common)
        self.schedule.setObjectName("capture_schedule")
        for label, value in SCHEDULES:
            self.schedule.addItem(label, value)
        self.schedule.setCurrentIndex(max(0, self.schedule.findData(schedule)))
        self.schedule.setToolTip(
            "Watch: capture again on this schedule (while the app is open, or from a system "
            "timer with `archiver watch run`) and list what changed under View > Changes"
        )
        self.watch_ignore = QPlainTextEdit(common)
        self.watch_ignore.setTabChangesFocus(True)  # Tab moves on: a list has no tabs
        self.watch_ignore.setObjectName("watch_ignore")
        self.watch_ignore.setPlaceholderText(
            "text that changes without mattering, one regular expression per line, e.g. \\d+ views"
        )
        self.watch_ignore.setMaximumHeight(54)
        self.schedule.currentIndexChanged.connect(self._schedule_changed)
        form.addRow("Capture again", self.schedule)
        form.addRow("Ignore in comparisons", self.watch_ignore)

    def _schedule_changed(self) -> None:
        watching = self.schedule.currentData() is not None
        self.watch_ignore.setEnabled(watching)
        self.capture_button.setText("Capture and Watch" if watching else "Capture")

    # ------------------------------------------------------------------ bookmarks

    def _choose_bookmarks(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Bookmarks file", "", "Bookmarks (*.html *.htm *.json *.txt);;All files (*)"
        )
        if path:
            self.load_bookmarks(Path(path))

    def load_bookmarks(self, path: Path) -> None:
        self.bookmarks_path.setText(str(path))
        try:
            self._bookmark_urls, self._bookmark_rejected = parse_bookmarks_file(path)
        except InputError as exc:
            self._bookmark_urls, self._bookmark_rejected = [], []
            self.bookmarks_summary.setText(exc.message)
            return
        skipped = len(self._bookmark_rejected)
        self.bookmarks_summary.setText(
            f"{len(self._bookmark_urls):,} web addresses found"
            + (f"; {skipped:,} entries are not web pages and will be skipped" if skipped else "")
        )

    # ------------------------------------------------------------------ result

    def build(self) -> CaptureRequest:
        """The request for the current tab; raises :class:`InputError` explaining why not."""
        slug, name = chosen_collection(self.collection)
        tab = self.tabs.currentIndex()
        crawl: CrawlOptions | None = None
        if tab == TAB_URLS:
            urls, rejected = parse_url_lines(self.urls.toPlainText())
        elif tab == TAB_BOOKMARKS:
            if not self.bookmarks_path.text():
                raise InputError("choose a bookmarks file first")
            urls, rejected = self._bookmark_urls, self._bookmark_rejected
        else:
            urls, rejected = parse_url_lines(self.seed.text())
            crawl = CrawlOptions(
                scope=str(self.scope.currentData()),
                depth=self.depth_spin.value(),
                page_limit=self.page_limit.value(),
                ignore_patterns=parse_ignore_patterns(self.ignore.toPlainText()),
                concurrency=self.concurrency.value(),
                user_agent=self.user_agent.text().strip(),
            )
        return build_request(
            urls,
            collection=slug,
            collection_name=name,
            tags_text=self.tags.text(),
            crawl=crawl,
            rejected=rejected,
            profile=self.profile.currentData(),
            login_check=not self.keep_login_pages.isChecked(),
            schedule=self.schedule.currentData(),
            watch_ignore=parse_ignore_patterns(
                self.watch_ignore.toPlainText(), "text to ignore in comparisons"
            )
            if self.schedule.currentData()
            else (),  # the field is disabled: what it holds is not asked for
        )

    def accept(self) -> None:
        try:
            request = self.build()
        except InputError as exc:
            self.problems.setText(exc.message)
            return
        if request.rejected and self.tabs.currentIndex() == TAB_URLS:
            lines = "; ".join(f"line {r.line}: {r.reason}" for r in request.rejected[:5])
            more = len(request.rejected) - 5
            tail = f" (and {more} more)" if more > 0 else ""
            if self.problems.property("confirmed") != request.rejected:
                self.problems.setText(
                    f"Some lines are not web addresses and will be skipped — {lines}{tail}. "
                    f"Press {self.capture_button.text()} again to capture the rest."
                )
                self.problems.setProperty("confirmed", request.rejected)
                return
        self.request = request
        super().accept()
