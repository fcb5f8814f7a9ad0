"""A WACZ whose pages list is intact but whose zip checksum (CRC-32) of it is damaged: the
list is still used (titles, tags, notes), with a line saying its checksum did not match;
when its bytes also differ from the hash datapackage.json lists, the import says the list
is not as listed and takes no titles or texts from it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app.export import Selection, export
from archiver_app.export.signing import Signing
from archiver_app.importers.outcome import OutcomeState
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.unit.importers.test_labels_roundtrip import _labelled, _rows, _without_ids

PAGES = "pages/pages.jsonl"


def _titles(lib: Library) -> list[str]:
    with lib.engine.connect() as conn:
        return sorted(str(t) for t in conn.scalars(text("SELECT title FROM snapshots")))


def _damage_crc(wacz: Path, out: Path, *, where: str, entry: str = PAGES) -> Path:
    """``wacz`` with one bit of ``entry``'s CRC-32 flipped in the central directory
    (``where="directory"``) or in both its local header and the directory (``"both"``)."""
    data = bytearray(wacz.read_bytes())
    with zipfile.ZipFile(wacz) as zf:
        infos = zf.infolist()
        order = [i.filename for i in infos].index(entry)
        local = infos[order].header_offset
    central = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)][order]
    data[central + 16] ^= 0x01
    if where == "both":
        assert data.startswith(b"PK\x03\x04", local)
        data[local + 14] ^= 0x01
    out.write_bytes(bytes(data))
    return out


def _strip_digests(wacz: Path, out: Path) -> Path:
    """``wacz`` without datapackage.json and its digest (no hash lists the pages list)."""
    with zipfile.ZipFile(wacz) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename not in ("datapackage.json", "datapackage-digest.json"):
                dst.writestr(info, src.read(info.filename))
    return out


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("where", ["directory", "both"])
def test_a_damaged_checksum_of_an_intact_pages_list_keeps_titles_tags_and_notes(
    library: Library, tmp_path: Path, signed: bool, where: str
) -> None:
    _labelled(library)
    good = tmp_path / "good.wacz"
    sign = Signing(key_folder=tmp_path / "keys") if signed else None
    export(library, Selection(), good, sign=sign)
    damaged = _damage_crc(good, tmp_path / "damaged.wacz", where=where)
    with zipfile.ZipFile(damaged) as zf, pytest.raises(zipfile.BadZipFile):
        zf.read(PAGES)  # the damage is real: zipfile refuses the entry
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [damaged]).outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        assert _without_ids(_rows(other)) == _without_ids(_rows(library))
        assert _titles(other) == _titles(library)
        assert outcome.package is not None and not outcome.package.tampered
        assert any(
            f"its pages list ({PAGES}) was used: its checksum (CRC-32) in the zip did not "
            "match" in p
            for p in outcome.problems
        ), outcome.problems
        assert not any("cannot be trusted" in p for p in outcome.problems), outcome.problems


def test_a_pages_list_with_no_hash_to_check_is_used_with_a_warning(
    library: Library, tmp_path: Path
) -> None:
    _labelled(library)
    good = tmp_path / "good.wacz"
    export(library, Selection(), good)
    bare = _strip_digests(good, tmp_path / "bare.wacz")
    damaged = _damage_crc(bare, tmp_path / "damaged.wacz", where="directory")
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [damaged]).outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        assert _without_ids(_rows(other)) == _without_ids(_rows(library))
        assert any(
            f"its pages list ({PAGES}) was used, though its checksum (CRC-32) in the zip did "
            "not match and no hash in datapackage.json could check it" in p
            for p in outcome.problems
        ), outcome.problems


def test_a_pages_list_whose_bytes_differ_from_what_was_signed_gives_no_titles(
    library: Library, tmp_path: Path
) -> None:
    """Its bytes changed (a title edited) with the zip's checksum left as it was: neither the
    CRC-32 nor the signed hash matches; the tags and notes still come back, but the titles
    are the WARC's."""
    _labelled(library)
    good = tmp_path / "good.wacz"
    export(library, Selection(), good, sign=Signing(key_folder=tmp_path / "keys"))
    edited = tmp_path / "edited.wacz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(edited, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == PAGES:
                assert b'"title": "Capture of' in data
                data = data.replace(b'"title": "Capture of', b'"title": "Edited of')
            dst.writestr(info, data)
    damaged = _damage_crc(edited, tmp_path / "damaged.wacz", where="both")
    with Library.open(tmp_path / "other", create=True) as other:
        [outcome] = import_paths(other, [damaged]).outcomes
        assert outcome.state is OutcomeState.IMPORTED, outcome.reason
        assert not any(t.startswith("Edited") for t in _titles(other))
        assert sum(bool(r[5]) for r in _rows(other)) == 2  # the tags still came back
        assert any(
            f"its pages list ({PAGES}) differs from what datapackage.json lists (and was "
            "signed)" in p
            for p in outcome.problems
        ), outcome.problems
