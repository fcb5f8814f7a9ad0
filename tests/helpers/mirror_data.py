"""Real archive files registered in a library, for the mirror tests and benchmark."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from archiver_app.library import Library
from archiver_app.store.files import register_file
from archiver_app.store.models import Copy, CopyState, File, Record, Snapshot


@dataclass(frozen=True)
class Made:
    snapshot_id: int
    file_ids: list[int]
    paths: list[str]


def make_snapshot(
    lib: Library,
    sizes: list[int],
    *,
    collection: str = "default",
    captured_at: datetime | None = None,
    seed: int = 0,
    name: str | None = None,
) -> Made:
    """One snapshot folder with ``len(sizes)`` files of random bytes, registered."""
    coll = lib.ensure_collection(collection)
    at = captured_at or datetime(2024, 1, 1, tzinfo=UTC)
    rng = random.Random(seed)
    uid = name or f"s{seed:06d}"
    folder = f"collections/{collection}/{at:%Y}/{at:%m}/{uid}"
    with lib.write() as s:
        snap = Snapshot(
            uid=uid,
            collection_id=coll,
            url=f"https://example.org/{uid}",
            url_key=f"org,example)/{uid}",
            url_group=f"org,example)/{uid}",
            captured_at=at,
            state="complete",
            fs_version="archiver-2",
            folder=folder,
        )
        s.add(snap)
        s.flush()
        ids, paths = [], []
        for i, size in enumerate(sizes):
            rel = f"{folder}/file{i}.bin"
            path = lib.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(rng.randbytes(size))
            row = register_file(s, lib.root, rel, "warc", snap.id)
            ids.append(row.id)
            paths.append(rel)
        return Made(snap.id, ids, paths)


def add_revisit(lib: Library, revisit_file: int, original_file: int) -> None:
    """Record that ``revisit_file`` holds a revisit of a response in ``original_file``."""
    with lib.write() as s:
        orig = Record(
            url_key="org,example)/x",
            ts="20240101000000000",
            url="https://example.org/x",
            record_type="response",
            file_id=original_file,
            offset=0,
            length=10,
        )
        s.add(orig)
        s.flush()
        s.add(
            Record(
                url_key="org,example)/x",
                ts="20240102000000000",
                url="https://example.org/x",
                record_type="revisit",
                file_id=revisit_file,
                offset=0,
                length=10,
                revisit_of_id=orig.id,
            )
        )


def copy_states(lib: Library, dest_id: int) -> dict[int, str]:
    with lib.session() as s:
        return dict(
            s.execute(select(Copy.file_id, Copy.state).where(Copy.destination_id == dest_id)).all()
        )


def present_ids(lib: Library, dest_id: int) -> set[int]:
    return {f for f, st in copy_states(lib, dest_id).items() if st == CopyState.PRESENT}


def check_drive(lib: Library, mount: Path, dest_id: int) -> list[str]:
    """Problems on a drive: a copy marked present whose bytes are not where its row says,
    or any file under a final name whose bytes differ from the library's record (a partial
    file). A copy that stayed where it was written when its file moved in the library (its
    own ``copies.path``) is expected there."""
    problems = []
    folder = mount / "Archiver" / lib.id
    with lib.session() as s:
        files = {f.id: f for f in s.scalars(select(File))}
        copies = {
            c.file_id: c for c in s.scalars(select(Copy).where(Copy.destination_id == dest_id))
        }
    expected = {f.path: f.sha256 for f in files.values()}
    for fid, c in copies.items():
        if c.path is not None:
            expected[c.path] = files[fid].sha256
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or ".archiver-staging" in path.parts:
            continue
        rel = path.relative_to(folder).as_posix()
        if rel not in expected:
            problems.append(f"unexpected file {rel}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != expected[rel]:
            problems.append(f"wrong bytes under final name {rel}")
    for fid, c in copies.items():
        rel = c.path or files[fid].path
        if c.state == CopyState.PRESENT and not (folder / rel).is_file():
            problems.append(f"marked present but absent {rel}")
    return problems


def set_copy_state(lib: Library, file_id: int, dest_id: int, state: str) -> None:
    with lib.write() as s:
        row = s.get(Copy, (file_id, dest_id))
        if row is None:
            row = Copy(file_id=file_id, destination_id=dest_id)
            s.add(row)
        row.state, row.updated_at = state, lib.clock()
