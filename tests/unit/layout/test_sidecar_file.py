"""``index.json`` as a file: one encoding written, every earlier encoding still read."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from archiver_app.durable import is_temp
from archiver_app.layout import CURRENT_FS_VERSION
from archiver_app.layout.sidecar import (
    SIDECAR,
    SIDECAR_COLUMNS,
    build_sidecar,
    read_index,
    write_sidecar,
)

WHEN = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def _values(title: str) -> dict[str, object]:
    values: dict[str, object] = dict.fromkeys(SIDECAR_COLUMNS)
    values.update(
        uid="01HZX3ABCDEFGHJKMNPQRSTVWX",
        url="https://e.example/ünïcode",
        captured_at=WHEN,
        folder="collections/default/2024/05/01HZX3ABCDEFGHJKMNPQRSTVWX",
        fs_version=CURRENT_FS_VERSION,
        title=title,
        state="complete",
    )
    return values


def test_one_encoding_is_written_and_read_back(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "snap"  # created on the way
    data = build_sidecar(_values("Titre — été"), "default", ["b", "a"], [])
    raw = write_sidecar(folder, data)
    assert (folder / SIDECAR).read_bytes() == raw
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1 and raw.isascii()  # one line
    assert json.loads(raw) == json.loads(json.dumps(data, default=str))
    parsed = read_index(folder)
    assert (parsed.title, parsed.url, parsed.tags) == ("Titre — été", data["url"], ["a", "b"])
    assert not [p for p in folder.iterdir() if is_temp(p.name)]


def test_folders_written_in_earlier_encodings_still_read(tmp_path: Path) -> None:
    data = build_sidecar(_values("Überschrift"), "default", [], [])
    earlier = {
        # capture before one encoding: indented, non-ASCII as it is
        "capture": json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True).encode(),
        # the WARC importer: indented, ASCII
        "importer": json.dumps(data, indent=2, sort_keys=True).encode(),
        # another tool's UTF-8 with a byte order mark
        "bom": b"\xef\xbb\xbf" + json.dumps(data, ensure_ascii=False).encode(),
    }
    for name, raw in earlier.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / SIDECAR).write_bytes(raw)
        parsed = read_index(folder)
        assert (parsed.title, parsed.uid, parsed.captured_at) == ("Überschrift", data["uid"], WHEN)
