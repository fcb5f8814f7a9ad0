"""Damaged WACZ files: a WARC in it with a damaged gzip member keeps every other record; a
WACZ cut short is called cut short."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from archiver_app.export import Selection, export
from archiver_app.export.signing import Signing
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.warcs import (
    export_with_a_big_record,
    flip_a_bit_in_the_big_record,
    site,
    write_warc,
)
from tests.unit.importers.test_bad_input import make_wacz


def test_a_flipped_bit_in_a_wacz_warc_skips_only_that_record(
    library: Library, tmp_path: Path
) -> None:
    full = export_with_a_big_record(tmp_path / "full.warc.gz")
    flipped = tmp_path / "flipped.warc.gz"
    spans, bad = flip_a_bit_in_the_big_record(full, flipped)
    wacz = make_wacz(tmp_path / "flipped.wacz", flipped.read_bytes())
    outcome = import_paths(library, [wacz]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert (outcome.records, outcome.pages) == (len(spans) - 1, 100)
    damaged = [p for p in outcome.problems if "gzip member is damaged" in p]
    assert len(damaged) == 1 and f"offset {bad}:" in damaged[0], outcome.problems


def test_a_wacz_cut_short_is_called_cut_short(library: Library, tmp_path: Path) -> None:
    """It was refused with only 'not a zip file (File is not a zip file)'."""
    warc = write_warc(tmp_path / "w.warc.gz", site(3)).read_bytes()
    whole = make_wacz(tmp_path / "whole.wacz", warc).read_bytes()
    cut = tmp_path / "cut.wacz"
    cut.write_bytes(whole[:20])  # not even an entry's header
    outcome = import_paths(library, [cut]).outcomes[0]
    assert outcome.state is OutcomeState.FAILED
    assert "looks cut short" in outcome.reason and "central directory" in outcome.reason
    assert not list((library.root / "collections").rglob("*.warc.gz"))
    cut.write_bytes(whole[:200])  # inside the WARC, with no whole record left
    outcome = import_paths(library, [cut]).outcomes[0]
    assert outcome.state is OutcomeState.FAILED
    assert "the file ends inside a record" in outcome.reason
    assert outcome.problems[0].startswith("cut.wacz: the file is cut short"), outcome.problems
    # a file that is no zip at all still says so
    other = tmp_path / "other.wacz"
    other.write_bytes(b"not a zip at all\n" * 100)
    assert "not a zip file" in import_paths(library, [other]).outcomes[0].reason
    # one whose directory and entries are all damaged says that, in words
    ruined = tmp_path / "ruined.wacz"
    directory = whole[whole.index(b"PK\x01\x02") :].replace(b"PK\x01\x02", b"\x00" * 4)
    ruined.write_bytes(b"PK\x03\x04" + b"\x00" * 40 + directory)
    reason = import_paths(library, [ruined]).outcomes[0].reason
    assert reason.startswith("the zip is damaged: its central directory"), reason
    assert "no entry could be read" in reason


@pytest.mark.parametrize("damage", ["directory", "end", "local header"])
def test_a_wacz_with_a_damaged_zip_directory_keeps_every_record(
    library: Library, tmp_path: Path, damage: str
) -> None:
    """One damaged byte in the zip's central directory refused the whole export ('not a zip
    file (Bad magic number for central directory)'): its entries are read from their own
    headers, the records imported and the damage said."""
    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(3)))
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    with Library.open(tmp_path / "whole", create=True) as other:
        whole = import_paths(other, [good]).outcomes[0]
    data = good.read_bytes()
    central = data.index(b"PK\x01\x02")
    data = data[:central] + b"\x00" + data[central + 1 :] if damage != "end" else data[:-30]
    if damage == "local header":  # a later entry's own header too: the others are kept
        with zipfile.ZipFile(good) as zf:
            at = next(i.header_offset for i in zf.infolist() if i.filename.startswith("pages/"))
        data = data[:at] + b"JUNK" + data[at + 4 :]
    damaged = tmp_path / "damaged.wacz"
    damaged.write_bytes(data)
    with Library.open(tmp_path / "again", create=True) as again:
        outcome = import_paths(again, [damaged]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert outcome.problems[0].startswith(
        "damaged.wacz: the zip's central directory (the list of its entries, at the end of "
        "the file) is damaged or missing"
    ), outcome.problems
    assert outcome.records == whole.records
    if damage == "local header":
        assert f"bytes at offset {at} are no zip entry" in outcome.problems[1]
    else:
        assert outcome.pages == whole.pages
        assert outcome.problems[1:] == whole.problems  # the signature is valid, as signed
        assert "the signature is valid" in outcome.problems[-1]


def _flip_inside(wacz: Path, name: str, out: Path) -> Path:
    """``wacz`` with one bit of entry ``name``'s stored data flipped (damage on disk)."""
    data = bytearray(wacz.read_bytes())
    with zipfile.ZipFile(wacz) as zf:
        info = zf.getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0x10
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize(
    "name", ["datapackage.json", "datapackage-digest.json", "pages/pages.jsonl"]
)
def test_a_damaged_package_file_is_a_finding_and_the_records_are_kept(
    library: Library, tmp_path: Path, name: str
) -> None:
    """A damaged byte in datapackage.json made verify-export crash (zlib.error) and import
    refuse the whole WACZ; in the digest, import failed with "unexpected error"; in
    pages.jsonl, import refused it too. Each is now a finding, and every record is kept."""
    from archiver_app.export.signing import Difference, verify_wacz

    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(3)))
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    with Library.open(tmp_path / "whole", create=True) as other:
        whole = import_paths(other, [good]).outcomes[0]
    damaged = _flip_inside(good, name, tmp_path / "damaged.wacz")

    report = verify_wacz(damaged)
    assert not report.ok
    kinds = {f.name: f.kind for f in report.findings}
    if name == "pages/pages.jsonl":
        # its bytes read whole and match neither their hash nor their CRC-32: altered, and
        # checked (it was "cannot be read", as if lost, and "2 of 3 files checked")
        assert kinds[name] is Difference.CHANGED
        said = f"({report.files_listed} files checked)"
        assert report.lines()[-1].endswith(said), report.lines()
    else:
        assert kinds[name] is Difference.PACKAGE_UNREADABLE
        assert any(f"{name} cannot be read" in f.message for f in report.findings)
    if name == "datapackage-digest.json":  # there, but damaged: not called missing
        said = "not signed as it is: its signature file datapackage-digest.json cannot be read"
        assert said in report.lines()
    with Library.open(tmp_path / "again", create=True) as again:
        outcome = import_paths(again, [damaged]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert outcome.records == whole.records
    assert outcome.pages == whole.pages  # from the records when the list is damaged
    assert any(name in problem for problem in outcome.problems), outcome.problems


def test_a_garbled_zip_directory_is_read_from_the_entries_not_refused_as_a_bomb(
    library: Library, tmp_path: Path
) -> None:
    """Garbled bytes in the central directory that zipfile still opens gave one entry of
    4 GiB ('refusing a likely zip bomb') and verify-export said the package was missing."""
    from archiver_app.export.signing import verify_wacz

    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(3)))
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    data = bytearray(good.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 10 : central + 40] = b"\xff" * 30
    garbled = tmp_path / "garbled.wacz"
    garbled.write_bytes(bytes(data))

    report = verify_wacz(garbled)
    assert report.files_checked >= 3 and report.signature_valid, report.findings
    assert "is damaged or missing" in report.findings[0].message
    with Library.open(tmp_path / "again", create=True) as again:
        outcome = import_paths(again, [garbled]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert outcome.records > 0 and "zip bomb" not in " ".join(outcome.problems)


def _flip_directory_bit(data: bytes, damage: str) -> bytes:
    """``data`` (a zip) with one bit flipped in its central directory: in the end record's
    offset of the directory (a bit set, or one cleared: zipfile then moves every entry's
    offset by that much, before the start of the file or onto other bytes), or in the
    last entry's name."""
    out = bytearray(data)
    end = data.rindex(b"PK\x05\x06")
    offset = struct.unpack_from("<L", data, end + 16)[0]
    if damage == "name":
        out[data.rindex(b"PK\x01\x02") + 46 + 5] ^= 0x02
        return bytes(out)
    bit = next(b for b in range(32) if bool(offset >> b & 1) == (damage == "offset down"))
    struct.pack_into("<L", out, end + 16, offset ^ (1 << bit))
    return bytes(out)


@pytest.mark.parametrize("damage", ["offset up", "offset down", "name"])
def test_a_bit_flipped_in_the_zip_directory_reads_the_entries_from_their_headers(
    library: Library, tmp_path: Path, damage: str
) -> None:
    """One bit of the directory's offset in the zip's end record made an intact export
    unreadable: verify-export said "datapackage.json cannot be read (Bad magic number for
    file header)", import failed "Invalid argument" (an entry's offset before the start of
    the file) with no record; one in an entry's name said the signature file was missing.
    The directory is now damaged when its entries are not where they say, and read from
    the entries' own headers: every file checks, every record is imported."""
    from archiver_app.export.signing import Difference, verify_wacz

    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(3)))
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    with Library.open(tmp_path / "whole", create=True) as other:
        whole = import_paths(other, [good]).outcomes[0]
    damaged = tmp_path / "damaged.wacz"
    damaged.write_bytes(_flip_directory_bit(good.read_bytes(), damage))

    report = verify_wacz(damaged)
    assert [f.kind for f in report.findings] == [Difference.ZIP_DAMAGED], report.findings
    assert report.files_checked == verify_wacz(good).files_checked
    assert report.signature_valid and report.as_signed
    with Library.open(tmp_path / "again", create=True) as again:
        outcome = import_paths(again, [damaged]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert (outcome.records, outcome.pages) == (whole.records, whole.pages)
    assert "central directory" in outcome.problems[0], outcome.problems


@pytest.mark.parametrize("entry", ["archive/data.warc.gz", "datapackage.json"])
def test_a_checksum_damaged_in_the_zip_directory_is_not_called_an_alteration(
    library: Library, tmp_path: Path, entry: str
) -> None:
    """One bit of an entry's CRC-32 in the zip's central directory: verify-export said
    "archive/data.warc.gz cannot be read (Bad CRC-32 …)" and "the signature is valid, but
    the package is NOT as signed: it was altered after signing", though the WARC's bytes
    are as signed. The bytes are checked against their signed hash, not the zip's
    checksum: the verdict says the directory is damaged and the content as signed."""
    from archiver_app.export.signing import Difference, verify_wacz

    import_warc_file(library, write_warc(tmp_path / "w.warc.gz", site(3)))
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    with Library.open(tmp_path / "whole", create=True) as other:
        whole = import_paths(other, [good]).outcomes[0]
    data = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as zf:
        order = [i.filename for i in zf.infolist()].index(entry)
    central = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)][order]
    data[central + 16] ^= 0x01  # the entry's CRC-32 in the directory
    damaged = tmp_path / "damaged.wacz"
    damaged.write_bytes(bytes(data))

    report = verify_wacz(damaged)
    assert [f.kind for f in report.findings] == [Difference.ZIP_DAMAGED], report.findings
    assert f"the checksum (CRC-32) it gives for {entry} is not that" in report.problems[0]
    assert report.files_checked == report.files_listed == 3
    lines = report.lines()
    assert lines[1].endswith(": the signature is valid"), lines
    assert lines[-1] == (
        f"{damaged}: NOT intact as a file: the zip's central directory is damaged (said "
        "above); the content is as signed (3 files checked)"
    )
    with Library.open(tmp_path / "again", create=True) as again:
        outcome = import_paths(again, [damaged]).outcomes[0]
    assert outcome.state is OutcomeState.IMPORTED, outcome.reason
    assert (outcome.records, outcome.pages) == (whole.records, whole.pages)
    assert outcome.package is not None and not outcome.package.tampered
    assert not any("altered" in p for p in outcome.problems), outcome.problems
