"""Read a zip's local headers and central directory side by side, as a replay tool does.

ReplayWeb.page (wabac.js) finds an entry's data at ``header offset + 30 + name length +
extra length``, taking the extra length from the central directory whenever that entry has
no extra field there; any zip whose local header carries a field its central entry lacks
is read at the wrong place. These helpers check the two agree.
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

ZIP64_ID = 0x0001
MAX32 = 0xFFFFFFFF


def extra_fields(raw: bytes) -> dict[int, bytes]:
    fields: dict[int, bytes] = {}
    pos = 0
    while pos + 4 <= len(raw):
        field_id, size = struct.unpack_from("<HH", raw, pos)
        fields[field_id] = raw[pos + 4 : pos + 4 + size]
        pos += 4 + size
    assert pos == len(raw), f"extra field ends mid-field: {raw!r}"
    return fields


@dataclass(frozen=True)
class Member:
    name: str
    header_offset: int
    local_extra: bytes
    central_extra: bytes
    central_sizes_in_zip64: bool  # the central entry's 32-bit sizes say "see zip64"
    data_offset: int  # where the data really starts (from the local header)


def members(path: Path) -> list[Member]:
    """Each entry as the central directory (read raw, not through zipfile's decoding)
    and its local header describe it."""
    data = path.read_bytes()
    out = []
    with zipfile.ZipFile(path) as zf:
        pos, count = zf.start_dir, len(zf.infolist())  # type: ignore[attr-defined]
    for _ in range(count):
        assert data[pos : pos + 4] == b"PK\x01\x02"
        comp, size = struct.unpack_from("<II", data, pos + 20)
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, pos + 28)
        (offset,) = struct.unpack_from("<I", data, pos + 42)
        name = data[pos + 46 : pos + 46 + name_len].decode()
        central = data[pos + 46 + name_len : pos + 46 + name_len + extra_len]
        pos += 46 + name_len + extra_len + comment_len
        if offset == MAX32:  # the zip64 field holds the sizes it needs first, then this
            zip64 = extra_fields(central)[ZIP64_ID]
            (offset,) = struct.unpack_from("<Q", zip64, 8 * ((size == MAX32) + (comp == MAX32)))
        assert data[offset : offset + 4] == b"PK\x03\x04", name
        local_name_len, local_extra_len = struct.unpack_from("<HH", data, offset + 26)
        assert data[offset + 30 : offset + 30 + local_name_len] == name.encode()
        start = offset + 30 + local_name_len
        out.append(
            Member(
                name=name,
                header_offset=offset,
                local_extra=data[start : start + local_extra_len],
                central_extra=central,
                central_sizes_in_zip64=MAX32 in (comp, size),
                data_offset=start + local_extra_len,
            )
        )
    return out


def assert_headers_agree(path: Path) -> list[Member]:
    """Every local header's extra fields are the central directory's (the zip64 field in
    both or neither; the central one may add the header offset past 4 GiB), and a reader
    trusting the central directory's extra length finds each entry's data."""
    found = members(path)
    for m in found:
        local, central = extra_fields(m.local_extra), extra_fields(m.central_extra)
        assert (ZIP64_ID in local) == m.central_sizes_in_zip64, (m.name, local, central)
        if ZIP64_ID in local:
            assert central[ZIP64_ID][:16] == local[ZIP64_ID], m.name
        assert {k: v for k, v in local.items() if k != ZIP64_ID} == {
            k: v for k, v in central.items() if k != ZIP64_ID
        }, m.name
        if not m.central_extra:  # what ReplayWeb.page computes without reading the header
            name_len = len(m.name.encode())
            assert m.header_offset + 30 + name_len == m.data_offset, m.name
    return found
