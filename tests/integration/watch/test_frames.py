"""A watched page with frames: a capture whose text holds no text of the page's frames
(made before captures read frames, or imported) compared with one whose text
holds it is no change when no frame changed. Real Chromium, a real local site."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from archiver_app import cli
from archiver_app.capture import extract
from archiver_app.library import Library
from archiver_app.store.models import File, FileKind, Snapshot
from tests.helpers.webserver import LocalServer, Response

pytestmark = pytest.mark.slow

PAGE = (
    "<!doctype html><title>Harbour</title><p>Harbour notices.</p>"
    "<iframe src='/frame' width=300 height=80></iframe><p>Ferries run hourly.</p>"
)


def _text(library: Library, snapshot_id: int) -> str:
    with library.session() as s:
        path = s.scalar(
            select(File.path).where(File.snapshot_id == snapshot_id, File.kind == FileKind.TEXT)
        )
    assert path is not None
    return library.abspath(path).read_text(encoding="utf-8")


def test_a_capture_without_the_frames_text_is_no_change(
    library: Library,
    local_server: LocalServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    framed = {"text": "Tide tables: high water 06:10."}
    local_server.route("/page")(lambda _req: Response(200, PAGE.encode()))
    local_server.route("/frame")(
        lambda _req: Response(200, f"<!doctype html><p>{framed['text']}</p>".encode())
    )
    url = local_server.url("/page")
    root = ["--library", str(library.root)]
    watch = library.jobs.watch([url], schedule="daily")

    async def no_frames(_page: Any) -> list[str]:
        return []

    monkeypatch.setattr(extract, "frames_text", no_frames)  # as captures were made before
    assert cli.main([*root, "watch", "run"]) == 0
    monkeypatch.undo()
    with library.write() as s:  # ... which kept no mark of where the frames' text starts
        first = s.scalars(select(Snapshot)).one()
        first.provenance = {
            k: v for k, v in (first.provenance or {}).items() if k != extract.FRAMES_AT
        }
        first_id = first.id
    assert "Tide tables" not in _text(library, first_id)
    capsys.readouterr()

    assert cli.main([*root, "watch", "run", str(watch)]) == 0
    out = capsys.readouterr().out
    with library.session() as s:
        second = s.scalars(select(Snapshot).order_by(Snapshot.id.desc())).first()
        assert second is not None and second.id != first_id
        second_id, marked = second.id, (second.provenance or {}).get(extract.FRAMES_AT)
    text = _text(library, second_id)
    assert "Tide tables: high water 06:10." in text and marked is not None
    assert "Tide tables" in text[marked:] and "Tide tables" not in text[:marked]
    # the frames' text was counted as a change: "changed: URL (text 33.3%, ...)"
    assert f"unchanged: {url}" in out, out
    assert cli.main([*root, "diff", str(first_id), str(second_id)]) == 0
    said = capsys.readouterr().out
    assert f"capture {first_id} holds no text of the page's frames" in said, said

    framed["text"] = "Tide tables: high water 07:25."  # a frame that changes is a change
    assert cli.main([*root, "watch", "run", str(watch)]) == 0
    assert f"changed: {url} (text " in capsys.readouterr().out
