"""An import that brings pages the library already holds (its own export imported back)
names them, with the captures they repeat."""

from __future__ import annotations

from pathlib import Path

from archiver_app.export import Selection, export
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.warcs import site, write_warc


def test_an_export_imported_back_names_the_pages_it_repeats(
    library: Library, tmp_path: Path
) -> None:
    warcs = [write_warc(tmp_path / f"{h}.warc.gz", site(2, f"{h}.org")) for h in ("a", "b")]
    first = import_paths(library, warcs)
    earlier = [sid for o in first.outcomes for sid in o.snapshot_ids]
    assert len(earlier) == 4
    assert not any("already in the library" in p for o in first.outcomes for p in o.problems)
    export(library, Selection(), tmp_path / "back.wacz")  # both WARCs' records in one
    [again] = import_paths(library, [tmp_path / "back.wacz"]).outcomes
    assert len(again.snapshot_ids) == 4
    pairs = ", ".join(
        f"#{new} = #{old}" for new, old in zip(again.snapshot_ids, earlier, strict=True)
    )
    assert again.problems[-1] == (
        f"already in the library: 4 pages were captured before with the same records "
        f"({pairs}); archiver delete removes the copies you do not want"
    )
    other = import_paths(library, [write_warc(tmp_path / "o.warc.gz", site(2, "other.org"))])
    assert not any("already in the library" in p for p in other.outcomes[0].problems)


def test_a_changed_copy_that_keeps_the_digests_is_not_called_the_same(
    library: Library, tmp_path: Path
) -> None:
    """A copy of a WARC whose page was changed but whose digest headers were kept (edited
    in place) had its pages called "captured before with the same records", inviting the
    researcher to delete one of two different captures. Its content is checked first."""
    original = write_warc(tmp_path / "a.warc", site(2, "a.org"), gz=False)
    earlier = [sid for o in import_paths(library, [original]).outcomes for sid in o.snapshot_ids]
    edited = tmp_path / "copy" / "a.warc"
    edited.parent.mkdir()
    data = original.read_bytes()
    assert data.count(b"word1 museum") == 1
    edited.write_bytes(data.replace(b"word1 museum", b"word1 MUSEUM"))  # same length
    [again] = import_paths(library, [edited]).outcomes
    first, second = again.snapshot_ids
    assert again.problems[-2:] == [
        f"already in the library: 1 page was captured before with the same records "
        f"(#{first} = #{earlier[0]}); archiver delete removes the copies you do not want",
        f"altered: 1 page with the digests of earlier captures, whose content no longer "
        f"matches them (#{second} ≠ #{earlier[1]}): changed after they were written; the "
        "earlier captures are as they were",
    ]
