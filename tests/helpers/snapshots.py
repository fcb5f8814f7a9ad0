"""Realistic single snapshots for tests: rows, indexed text, a screenshot file, file rows."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from archiver_app.layout import CURRENT_FS_VERSION, snapshot_folder
from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.fulltext import upsert_snapshot_text
from archiver_app.store.models import FileKind, Snapshot, SnapshotTag, Tag
from archiver_app.warc.surt import domain_of, url_group, url_key


def write_png(path: Path, width: int = 320, height: int = 640, color: str = "#3a7bd5") -> None:
    from PIL import Image, ImageDraw

    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 60), fill=color)
    for y in range(90, height, 24):
        draw.rectangle((20, y, width - 20 - (y * 7) % 90, y + 10), fill="#888888")
    image.save(path)


def add_snapshot(
    library: Library,
    url: str,
    *,
    title: str = "",
    body: str = "",
    captured_at: datetime | None = None,
    state: str = "complete",
    tags: tuple[str, ...] = (),
    collection: str = "default",
    screenshot: bool = True,
    size_bytes: int = 12_345,
    fidelity: str = "high",
    provenance: dict[str, object] | None = None,
    mime: str = "text/html",
) -> int:
    """Insert one snapshot the way a capture would leave it; returns its id."""
    when = captured_at or library.clock()
    coll_id = library.ensure_collection(collection)
    uid = library.new_uid(when)
    folder = snapshot_folder(collection, when, uid)
    if screenshot:
        write_png(library.root / folder / "screenshot.png")
    (library.root / folder).mkdir(parents=True, exist_ok=True)
    (library.root / folder / "text.txt").write_text(body, encoding="utf-8")
    with library.write() as s:
        snap = Snapshot(
            uid=uid,
            collection_id=coll_id,
            url=url,
            url_key=url_key(url),
            url_group=url_group(url),
            domain=domain_of(url),
            captured_at=when.astimezone(UTC),
            state=state,
            http_status=200 if state == "complete" else None,
            mime=mime,
            title=title,
            size_bytes=size_bytes,
            fs_version=CURRENT_FS_VERSION,
            folder=str(folder),
            capture_backend="playwright",
            capture_fidelity=fidelity,
            provenance=provenance,
        )
        s.add(snap)
        s.flush()
        for name in tags:
            tag = s.query(Tag).filter_by(name=name).one_or_none()
            if tag is None:
                tag = Tag(name=name)
                s.add(tag)
                s.flush()
            s.add(SnapshotTag(snapshot_id=snap.id, tag_id=tag.id))
        if screenshot:
            register_file(s, library.root, f"{folder}/screenshot.png", FileKind.SCREENSHOT, snap.id)
        register_file(s, library.root, f"{folder}/text.txt", FileKind.TEXT, snap.id)
        upsert_snapshot_text(s.connection(), snap.id, title=title, url=url, body=body, tags=tags)
        return snap.id
