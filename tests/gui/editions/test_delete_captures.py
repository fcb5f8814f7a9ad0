"""Edit > Delete Captures…: a member of an accepted edition is refused with the edition's
name; after the edition is reopened the capture is deleted and leaves the table."""

from __future__ import annotations

from typing import Any

from archiver_app.api.editions import EditionState
from archiver_app.library import Library
from tests.unit.editions.memory_site import H, build, index_everything


def select(window: Any, qtbot: Any, snapshot_id: int) -> None:
    window.model.refresh()
    qtbot.waitUntil(lambda: window.model.row_of(snapshot_id) is not None)
    row = window.model.row_of(snapshot_id)
    window.table.clearSelection()
    window.table.selectRow(row)
    assert window.selected_ids() == [snapshot_id]


def delete(window: Any, qtbot: Any) -> Any:
    window.deletion.last_result = None
    window.deletion.action.trigger()
    qtbot.waitUntil(lambda: window.deletion.last_result is not None, timeout=10_000)
    return window.deletion.last_result


def test_deleting_a_frozen_member_is_refused_until_its_edition_is_reopened(
    qtbot: Any, library: Library, main_window: Any, monkeypatch: Any
) -> None:
    build(library)
    index_everything(library)
    library.editions.create("rivers", "e", year=2026)
    library.editions.explain_gap("e", f"{H}/dead", "gone")
    assert not library.editions.accept("e").refused
    member = next(t.snapshot_id for t in library.editions.coverage("e").targets
                  if t.url == f"{H}/a")  # fmt: skip
    assert member is not None
    window = main_window
    asked: list[int] = []
    monkeypatch.setattr(
        window.deletion, "confirm", lambda count, _name="": asked.append(count) or True
    )

    select(window, qtbot, member)
    window.deletion.action.trigger()  # refused before any question, nothing tried
    assert asked == [] and window.deletion.last_result is None
    assert window.deletion.refusal_box is not None
    text = window.deletion.refusal_box.text()
    assert "edition e" in text and "reopen" in text
    window.deletion.refusal_box.close()
    assert library.snapshots.detail(member) is not None

    library.editions.reopen("e")
    select(window, qtbot, member)
    result = delete(window, qtbot)
    assert result.deleted == [member]
    assert "Edition e needs review" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: window.model.row_of(member) is None)
    assert library.editions.get("e").state is EditionState.NEEDS_REVIEW
