"""What a repaint asks of Python: one call per cell, only for cells that changed.

Every call from a paint into Python takes the GIL back from busy worker threads, so the
views here are built to ask little: these tests pin that down.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QModelIndex, QModelRoleData, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView
from pytestqt.qtbot import QtBot

from archiver_app.api import jobs_view as data
from archiver_app.gui.html_delegate import HtmlDelegate
from archiver_app.gui.jobs_panel import JobsModel
from archiver_app.gui.ops import OpRunner
from archiver_app.gui.snapshot_model import (
    COL_DOMAIN,
    COL_SIZE,
    COL_STATUS,
    COL_TIME,
    COL_TITLE,
    RowDataRole,
    SnapshotIdRole,
    SnapshotTableModel,
)
from archiver_app.gui.tables import list_table
from archiver_app.library import Library
from tests.helpers.factories import bulk_snapshots


def _job(job_id: int, status: str, done: int) -> data.JobRow:
    return data.JobRow(
        id=job_id,
        name=f"job {job_id}",
        status=status,
        queued=100,
        done=done,
        failed=0,
        bytes=999,
        r2xx=done,
        r3xx=0,
        r4xx=0,
        r5xx=0,
        started_at=None,
        finished_at=None,
        concurrency=2,
        config={},
        coverage_md=None,
    )


def test_jobs_refresh_repaints_only_rows_that_changed(qtbot: QtBot) -> None:
    model = JobsModel()
    now = datetime.now(UTC)
    rows = [_job(i, "finished", 5) for i in range(1, 40)]
    model.set_rows(rows, now)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, _r=None: changed.append((a.row(), b.row())))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))

    model.set_rows(list(rows), now + timedelta(seconds=1))  # nothing changed
    assert changed == [] and resets == []

    rows2 = list(rows)
    rows2[7] = _job(8, "finished", 6)
    model.set_rows(rows2, now + timedelta(seconds=2))
    assert changed == [(7, 7)] and resets == []
    assert model.data(model.index(7, 4), Qt.ItemDataRole.DisplayRole) == "6"  # done
    assert model.data(model.index(7, 7), Qt.ItemDataRole.DisplayRole) == "6"  # 2xx
    assert model.data(model.index(7, 6), Qt.ItemDataRole.DisplayRole) == "999 B"

    changed.clear()
    running = [*rows2[:-1], _job(39, "running", 1)]
    model.set_rows(running, now + timedelta(seconds=3))
    model.set_rows(running, now + timedelta(seconds=4))  # a running job's ETA moves on
    assert changed == [(38, 38), (38, 38)] and resets == []

    model.set_rows(rows2[:10], now)  # rows came or went: a reset
    assert resets == [True] and model.rowCount() == 10


def test_small_tables_fit_columns_when_rows_change_not_on_every_refresh(qtbot: QtBot) -> None:
    now = datetime.now(UTC)
    model = JobsModel()
    table = list_table(None, model, "t")  # type: ignore[arg-type]
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    model.set_rows([_job(1, "finished", 5)], now)
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: header.sectionSize(4) > 0)
    qtbot.wait(20)  # the fit runs from a zero timer
    narrow = header.sectionSize(4)
    model.set_rows([_job(1, "finished", 123_456_789)], now)  # same rows, wider figure
    qtbot.wait(50)
    assert header.sectionSize(4) == narrow  # no re-measuring on a refresh
    model.set_rows([_job(1, "finished", 123_456_789), _job(2, "finished", 1)], now)
    qtbot.waitUntil(lambda: header.sectionSize(4) > narrow, timeout=2000)


def _loaded_model(
    qtbot: QtBot, library: Library, op_runner: OpRunner, rows: int
) -> SnapshotTableModel:
    """A captures model over ``rows`` new snapshots, every id loaded."""
    bulk_snapshots(library, rows)
    model = SnapshotTableModel(library, op_runner)
    model.refresh()
    qtbot.waitUntil(lambda: not model.loading and model.rowCount() == rows, timeout=10_000)
    return model


def test_multidata_answers_every_role_as_data_does(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    model = _loaded_model(qtbot, library, op_runner, 50)
    roles = [
        int(Qt.ItemDataRole.DisplayRole),
        int(Qt.ItemDataRole.ToolTipRole),
        int(Qt.ItemDataRole.TextAlignmentRole),
        int(Qt.ItemDataRole.DecorationRole),
        int(Qt.ItemDataRole.FontRole),
        int(SnapshotIdRole),
        int(RowDataRole),
    ]
    for row in (0, 17, 49):
        for col in (COL_TIME, COL_TITLE, COL_DOMAIN, COL_SIZE, COL_STATUS):
            index = model.index(row, col)
            for role in roles:
                slot = QModelRoleData(role)
                model.multiData(index, slot)
                assert slot.data() == model.data(index, role), (row, col, role)
    assert model.data(model.index(0, COL_TITLE))  # real text, not the "…" placeholder
    assert model.data(QModelIndex()) is None


def test_snippet_delegate_lays_out_each_snippet_once_and_skips_empty_cells(
    qtbot: QtBot,
) -> None:
    from PySide6.QtGui import QStandardItem, QStandardItemModel

    model = QStandardItemModel(3, 1)
    model.setItem(0, 0, QStandardItem("a <b>climate</b> report"))
    model.setItem(1, 0, QStandardItem(""))
    model.setItem(2, 0, QStandardItem("a <b>climate</b> report"))
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    delegate = HtmlDelegate(view)
    image = QImage(QSize(400, 120), QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    try:
        for _ in range(3):
            for row in range(3):
                option = QStyleOptionViewItem()
                option.rect = view.visualRect(model.index(row, 0))
                option.widget = view
                delegate.paint(painter, option, model.index(row, 0))
    finally:
        painter.end()
    assert len(delegate._docs) == 1  # two cells, three paints each: laid out once

    def inked(row: int) -> int:
        r = view.visualRect(model.index(row, 0))
        return sum(
            1
            for x in range(r.left(), min(r.right(), 399))
            for y in range(r.top(), min(r.bottom(), 119))
            if image.pixelColor(x, y).lightness() < 128
        )

    assert inked(0) > 20 and inked(2) > 20  # the snippet's text was drawn
    assert inked(1) == 0  # an empty cell: background only


def test_asking_for_a_rows_id_reads_no_page_of_rows(
    qtbot: QtBot, library: Library, op_runner: OpRunner
) -> None:
    model = _loaded_model(qtbot, library, op_runner, 2000)
    pages = list(model._pages)
    ids = [model.data(model.index(row, COL_TITLE), SnapshotIdRole) for row in range(0, 2000, 97)]
    assert ids == [model.snapshot_id(row) for row in range(0, 2000, 97)]
    assert list(model._pages) == pages  # only the first page, read with the first chunk
