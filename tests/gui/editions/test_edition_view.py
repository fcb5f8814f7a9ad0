"""The edition coverage view: counts, gaps with reasons typed in place, accept and reopen,
and the sidebar entry that opens it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox
from sqlalchemy import update

from archiver_app.api.editions import EditionState
from archiver_app.crawl.api import list_jobs
from archiver_app.crawl.jobs import create_job
from archiver_app.gui.edition_view import REASON_COLUMN, EditionView
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from tests.helpers.crawl_site import MemoryPage, MemorySiteFetcher
from tests.unit.editions.memory_site import H, build, crawl, files_on_disk, index_everything


@pytest.fixture
def edition(library: Library) -> str:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "rivers-2026", year=2026, targets_text=f"{H}/listed\n")
    return "rivers-2026"


def cells(table: Any, row: int) -> list[str]:
    return [table.item(row, c).text() for c in range(table.columnCount())]


def gap_rows(view: EditionView) -> dict[str, int]:
    return {view.gaps.item(r, 0).text(): r for r in range(view.gaps.rowCount())}


def open_view(qtbot: Any, library: Library, name: str, runner: Any) -> EditionView:
    view = EditionView(library, name, runner)
    qtbot.addWidget(view)
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    return view


def act(qtbot: Any, view: EditionView, action: Any) -> None:
    """Do ``action`` and wait until the view has re-read the edition after it."""
    with qtbot.waitSignal(view.loaded, timeout=60_000):
        action()


def test_the_view_shows_counts_gaps_and_accepts_once_every_gap_has_a_reason(
    qtbot: Any, library: Library, op_runner: Any, edition: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    view = open_view(qtbot, library, edition, op_runner)
    assert cells(view.counts, 0) == ["All domains", "6", "4", "1", "1", "1"]
    assert cells(view.counts, 1)[0] == "site.test"
    assert "ignore '/private/'" in view.excluded.text()
    rows = gap_rows(view)
    assert set(rows) == {f"{H}/dead", f"{H}/listed"}
    assert view.capture_button.text() == "Capture 2 missing URLs"
    assert view.capture_button.isEnabled()

    act(qtbot, view, view.accept_button.click)
    assert "Not accepted" in view.notice.text() and "2 gaps have no reason" in view.notice.text()
    selected = {view.gaps.item(i.row(), 0).text() for i in view.gaps.selectedIndexes()}
    assert selected == {f"{H}/dead", f"{H}/listed"}
    assert library.editions.get(edition).state is EditionState.SEARCH_READY

    for url in (f"{H}/dead", f"{H}/listed"):
        item = view.gaps.item(gap_rows(view)[url], REASON_COLUMN)
        assert item.flags() & Qt.ItemFlag.ItemIsEditable
        act(qtbot, view, lambda item=item, url=url: item.setText(f"reason for {url}"))
    coverage = library.editions.coverage(edition)
    assert {g.url: g.gap_reason for g in coverage.gaps} == {
        f"{H}/dead": f"reason for {H}/dead",
        f"{H}/listed": f"reason for {H}/listed",
    }

    with qtbot.waitSignal(view.changed):
        act(qtbot, view, view.accept_button.click)
    assert library.editions.get(edition).state is EditionState.RESEARCH_READY
    assert "Accepted" in view.notice.text()
    assert "accepted and frozen</b> on " in view.state.text()
    assert view.accept_button.text() == "Reopen…"
    assert not view.capture_button.isEnabled()
    frozen = view.gaps.item(0, REASON_COLUMN)
    assert not frozen.flags() & Qt.ItemFlag.ItemIsEditable

    act(qtbot, view, view.accept_button.click)  # Reopen…
    assert library.editions.get(edition).state is EditionState.NEEDS_REVIEW
    assert view.accept_button.text() == "Accept…"


def test_export_release_runs_an_export_job_that_writes_the_reports(
    qtbot: Any, library: Library, op_runner: Any, edition: str, monkeypatch: Any, tmp_path: Path
) -> None:
    files_on_disk(library)
    out = tmp_path / "release" / "rivers"
    out.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(out), ""))
    view = open_view(qtbot, library, edition, op_runner)
    with qtbot.waitSignal(view.changed, timeout=120_000):
        view.export_button.click()
    assert "Release written" in view.notice.text(), view.notice.text()
    assert (out.parent / "rivers.wacz").exists()  # the view adds the suffix
    report = json.loads((out.parent / "rivers.coverage.json").read_text())  # named after it
    assert len(report["targets"]) == 7
    assert not (out.parent / f"{edition}.coverage.json").exists()
    jobs = [j for j in list_jobs(library) if j.kind == "export"]
    assert [j.status for j in jobs] == ["completed"]


def test_a_release_signed_and_timestamped_from_the_view(
    qtbot: Any, library: Library, op_runner: Any, edition: str, monkeypatch: Any, tmp_path: Path
) -> None:
    from archiver_app.export.pending import set_default_authority
    from archiver_app.export.signing import fingerprint, verify_wacz
    from archiver_app.export.timestamps import TimestampState, load_roots
    from tests.helpers.tsa import LocalTSA

    files_on_disk(library)
    tsa = LocalTSA(tmp_path / "tsa").start()
    try:
        set_default_authority(library, tsa.url)
        out = tmp_path / f"{edition}.wacz"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(out), ""))
        view = open_view(qtbot, library, edition, op_runner)
        assert not view.signing.stamp_box.isEnabled()  # a timestamp stamps a signature
        view.signing.sign_box.setChecked(True)
        view.signing.stamp_box.setChecked(True)
        with qtbot.waitSignal(view.changed, timeout=120_000):
            view.export_button.click()
        report = verify_wacz(out, tsa_roots=load_roots(tsa.root))
        key = fingerprint(report.public_key or "")
        assert f"Signed with your key {key}. Timestamped at " in view.notice.text()
        assert report.ok and report.timestamp.state is TimestampState.VALID
    finally:
        tsa.stop()


def test_editions_are_listed_under_their_collection_and_open_in_a_tab(
    qtbot: Any, library: Library, edition: str, main_window: Any, monkeypatch: Any
) -> None:
    main_window.reload_sidebar()
    rivers = next(c.id for c in library.collections.all() if c.slug == "rivers")
    keys = [e.key for e in main_window.sidebar.entries()]
    assert keys[keys.index(f"collection:{rivers}") + 1] == "edition:rivers-2026"
    item = main_window.sidebar.findItems("rivers-2026", Qt.MatchFlag.MatchRecursive)[0]
    assert item.parent().text(0) == "Rivers" and "2026, search ready" in item.toolTip(0)
    assert main_window.sidebar.select_key("edition:rivers-2026")
    view = main_window.tabs.currentWidget()
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    assert isinstance(view, EditionView) and view.name == "rivers-2026"
    replayed: list[int] = []  # a member double-clicked opens in the window's replay tab
    monkeypatch.setattr(main_window.tabs, "open_replay", replayed.append)
    view.members.cellDoubleClicked.emit(0, 0)
    assert replayed == [view._member_ids[0]] and replayed[0] is not None
    assert main_window.sidebar.select_key("view:all")
    assert main_window.sidebar.select_key("edition:rivers-2026")
    assert sum(isinstance(main_window.tabs.widget(i), EditionView)
               for i in range(main_window.tabs.count())) == 1  # fmt: skip


def test_an_open_view_and_the_sidebar_follow_a_job_that_ends(
    qtbot: Any, library: Library, edition: str, main_window: Any
) -> None:
    main_window.reload_sidebar()
    assert main_window.sidebar.select_key("edition:rivers-2026")
    view = main_window.tabs.currentWidget()
    qtbot.waitSignal(view.loaded, timeout=10_000).wait()
    assert cells(view.counts, 0) == ["All domains", "6", "4", "1", "1", "1"]

    # A capture of the missing URL runs elsewhere (the worker, another window).
    job = create_job(library, [f"{H}/listed"], scope="page", collection="rivers")
    crawl(library, MemorySiteFetcher(library, {f"{H}/listed": MemoryPage()}))
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        main_window.jobs.job_finished.emit(job, "indexed")
    assert cells(view.counts, 0) == ["All domains", "6", "5", "1", "0", "1"]
    assert "not yet searchable" in view.state.text()  # its new capture is not indexed
    item = main_window.sidebar.findItems("rivers-2026", Qt.MatchFlag.MatchRecursive)[0]
    assert item.toolTip(0).endswith("2026, in progress")
    # A change no job made (indexed by hand): the view's own refresh moves the state and
    # tells the window, whose sidebar follows.
    index_everything(library)
    with qtbot.waitSignal(view.changed, timeout=10_000):
        view.reload()
    item = main_window.sidebar.findItems("rivers-2026", Qt.MatchFlag.MatchRecursive)[0]
    assert item.toolTip(0).endswith("2026, search ready")


def test_capture_missing_runs_one_capture_job_and_the_view_shows_its_result(
    qtbot: Any, library: Library, op_runner: Any, tmp_path: Path
) -> None:
    from tests.helpers.webserver import LocalServer

    server = LocalServer().start()
    try:
        server.add_static("/listed", "<!doctype html><title>Listed</title><p>Here now.</p>")
        listed = server.url("/listed")
        build(library)
        index_everything(library)
        library.editions.create("rivers", "e", year=2026, targets_text=f"{listed}\n")
        view = open_view(qtbot, library, "e", op_runner)
        assert view.capture_button.text() == "Capture 2 missing URLs"  # /dead and /listed
        with qtbot.waitSignal(view.changed, timeout=300_000,
                              check_params_cb=lambda c: c.jobs and "finished" in
                              view.notice.text()):  # fmt: skip
            view.capture_button.click()
        qtbot.waitSignal(view.loaded, timeout=10_000).wait()
        states = {t.url: t.state.value for t in library.editions.coverage("e").targets}
        assert states[listed] == "captured"
        assert states[f"{H}/dead"] == "failed"  # no such host: it fails again
        assert view.capture_button.text() == "Capture 1 missing URL"
    finally:
        server.stop()


def test_a_view_closed_while_it_reads_ignores_the_answer(
    qtbot: Any, library: Library, op_runner: Any, edition: str
) -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    view = EditionView(library, edition, op_runner)  # starts reading in the background
    view.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.waitUntil(lambda: not op_runner.busy(), timeout=10_000)
    qtbot.wait(50)  # the result's queued signal is delivered, and dropped


def test_the_sidebar_names_what_the_table_shows_and_an_edition_opens_again(
    qtbot: Any, library: Library, edition: str, main_window: Any
) -> None:
    window = main_window
    window.reload_sidebar()
    rivers = next(c.id for c in library.collections.all() if c.slug == "rivers")
    assert window.sidebar.select_key(f"collection:{rivers}")
    assert window.sidebar.select_key(f"edition:{edition}")
    view = window.tabs.currentWidget()
    assert isinstance(view, EditionView)
    qtbot.waitUntil(lambda: window.sidebar.current_entry().key == f"collection:{rivers}")
    assert window.model.query.collection_id == rivers  # the table still lists the collection

    window.tabs.removeTab(window.tabs.indexOf(view))
    assert window.sidebar.select_key(f"edition:{edition}")  # the same click, again
    again = window.tabs.currentWidget()
    assert isinstance(again, EditionView) and again is not view


def test_accept_with_unexplained_gaps_says_why_without_asking_first(
    qtbot: Any, library: Library, op_runner: Any, edition: str, monkeypatch: Any
) -> None:
    asked: list[str] = []

    def question(_parent: Any, title: str, _text: str, *_: Any) -> QMessageBox.StandardButton:
        asked.append(title)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    view = open_view(qtbot, library, edition, op_runner)
    act(qtbot, view, view.accept_button.click)
    assert asked == []  # nothing would be frozen: no "Accept this edition?" first
    assert "Not accepted" in view.notice.text() and "2 gaps have no reason" in view.notice.text()
    for url in (f"{H}/dead", f"{H}/listed"):
        item = view.gaps.item(gap_rows(view)[url], REASON_COLUMN)
        act(qtbot, view, lambda item=item, url=url: item.setText(f"reason for {url}"))
    with qtbot.waitSignal(view.changed):
        act(qtbot, view, view.accept_button.click)
    assert asked == ["Accept this edition?"]  # now it freezes: it asks
    assert library.editions.get(edition).state is EditionState.RESEARCH_READY


def test_the_members_are_listed_and_a_double_click_replays_one(
    qtbot: Any, library: Library, op_runner: Any, edition: str
) -> None:
    with library.write() as s:  # one member is a capture of a 404: the view says so
        s.execute(update(Snapshot).where(Snapshot.url == f"{H}/b").values(http_status=404))
    view = open_view(qtbot, library, edition, op_runner)
    cov = library.editions.coverage(edition)
    members = {t.url: t for t in cov.targets if t.snapshot_id is not None}
    assert len(members) == 4 == view.members.rowCount()  # the four captured of six intended
    shown = {cells(view.members, r)[0]: r for r in range(view.members.rowCount())}
    assert set(shown) == set(members)
    assert shown[f"{H}/b"] == 0 and cells(view.members, 0)[2] == "404"  # listed first
    assert "Members: 4</b> (1 of them an error page, listed first)" in view.members_label.text()
    assert "answered 404: this is its error page" in view.members.item(shown[f"{H}/b"], 2).toolTip()
    url, row = next((u, r) for u, r in shown.items() if u != f"{H}/b")
    assert cells(view.members, row)[1:] == [
        f"{members[url].captured_at:%Y-%m-%d %H:%M} UTC",
        "200",
        "last good capture",
    ]
    assert "error page" not in view.members.item(row, 2).toolTip()
    with qtbot.waitSignal(view.open_capture) as opened:
        view.members.cellDoubleClicked.emit(row, 0)
    assert opened.args == [members[url].snapshot_id]
