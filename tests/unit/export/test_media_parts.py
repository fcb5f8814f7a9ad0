"""Media a browser fetched in byte ranges, exported: the 206 parts of a URL whose whole
response is exported too stay in the WARC but not in the index (ReplayWeb.page picked a
one-megabyte part for a video, which then did not play); a URL stored only in parts keeps
its parts indexed."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from archiver_app.export import Selection, export
from archiver_app.library import Library
from tests.helpers.archive import ArchiveWriter, at

VIDEO = "https://v.example/clip.webm"
ONLY_PARTS = "https://v.example/ranges-only.webm"
BODY = bytes(range(256)) * 64  # 16 KiB
STEP = 4096


def _parts(w: ArchiveWriter, url: str, *, hour: int) -> None:
    for first in range(0, len(BODY), STEP):
        last = min(first + STEP, len(BODY)) - 1
        w.response(
            url,
            BODY[first : last + 1],
            at=at(2025, 1, 1, hour),
            status=206,
            mime="video/webm",
            headers=[("Content-Range", f"bytes {first}-{last}/{len(BODY)}")],
        )


def _index(dest: Path) -> list[tuple[str, str]]:
    with zipfile.ZipFile(dest) as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
    fields = [json.loads(line.split(" ", 2)[2]) for line in lines if line]
    return [(f["url"], f.get("status", "")) for f in fields]


def _warc_statuses(dest: Path, tmp_path: Path) -> list[tuple[str, int | None]]:
    from archiver_app.warc.scan import scan_records

    with zipfile.ZipFile(dest) as zf:
        (tmp_path / "data.warc.gz").write_bytes(zf.read("archive/data.warc.gz"))
    recs = scan_records(tmp_path / "data.warc.gz")
    return [(r.url, r.status) for r in recs if r.rec_type == "response"]


def test_parts_of_a_video_exported_whole_too_are_left_out_of_the_index(
    library: Library, tmp_path: Path
) -> None:
    w = ArchiveWriter(library, "collections/default/2025/01/v/capture.warc.gz")
    _parts(w, VIDEO, hour=1)  # what the player asked for
    w.response(VIDEO, BODY, at=at(2025, 1, 1, 2), mime="video/webm")  # the whole, later
    w.response(
        VIDEO,
        b"",
        at=at(2025, 1, 1, 2),
        status=206,
        mime="video/webm",
        headers=[("Content-Range", f"bytes 0-99/{len(BODY)}")],
        truncated="length",
    )
    _parts(w, ONLY_PARTS, hour=1)  # never fetched whole
    # the page last: what a browser wrote before it goes with it
    w.response(
        "https://v.example/",
        "<title>Video</title><video src=clip.webm>",
        at=at(2025, 1, 1, 1),
        page=True,
    )
    w.commit()
    dest = tmp_path / "v.wacz"
    result = export(library, Selection(), dest)
    assert not result.problems
    index = _index(dest)
    assert [s for u, s in index if u == VIDEO] == ["200"]
    assert [s for u, s in index if u == ONLY_PARTS] == ["206"] * 4
    stored = _warc_statuses(dest, tmp_path)  # every part is still in the WARC
    assert sorted(s for u, s in stored if u == VIDEO) == [200] + [206] * 5
    assert result.records == len(stored)
