"""``archiver cite NAME`` cites an edition as a data set: its name, collection, period and
state, and once released the release's date and its WACZ's SHA-256."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import text

from archiver_app import cli
from archiver_app.library import Library
from tests.unit.editions.accepted import accepted_edition


@pytest.fixture
def root(library: Library, tmp_path: Path) -> str:
    """Accepted edition c-2024 of two imported pages."""
    accepted_edition(library, tmp_path)
    return str(library.root)


def _cite(root: str, *args: str) -> int:
    return cli.main(["--library", root, "cite", *args])


def test_an_accepted_edition_not_yet_released(
    root: str, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    bib = capsys.readouterr().out
    accepted = library.editions.get("c-2024").accepted_at
    assert accepted is not None
    assert bib.startswith("@dataset{edition_c2024,\n")
    assert "title = {{c-2024: edition of the collection C, 2024}}" in bib
    assert f"date = {{{accepted:%Y-%m-%d}}}" in bib
    assert f"note = {{Period 2024; Accepted {accepted:%Y-%m-%d}}}" in bib
    assert f"eprint = {{urn:archiver:{library.id}:edition:c-2024}}" in bib
    assert "SHA-256" not in bib
    # the identifier the citation gives names the edition again
    assert _cite(root, f"urn:archiver:{library.id}:edition:c-2024", "--format", "bibtex") == 0
    assert capsys.readouterr().out == bib


def test_a_released_edition_names_its_release_and_digest(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out.wacz"
    assert cli.main(["--library", root, "edition", "export", "c-2024", str(wacz)]) == 0
    digest = hashlib.sha256(wacz.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in capsys.readouterr().out
    released = library.clock()

    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    bib = capsys.readouterr().out
    assert f"date = {{{released:%Y-%m-%d}}}" in bib
    assert f"released {released:%Y-%m-%d}, WACZ out.wacz, SHA-256 {digest}" in bib

    assert _cite(root, "c-2024") == 0  # APA, through citeproc-py as captures are
    apa = capsys.readouterr().out
    assert apa.startswith(f"C. ({released:%Y}). c-2024: edition of the collection C, 2024")
    assert f"SHA-256 {digest}" in apa and "[Web archive edition, accepted " in apa

    assert _cite(root, "c-2024", "--format", "csl-json") == 0
    [item] = json.loads(capsys.readouterr().out)
    assert item["type"] == "dataset" and digest in item["note"]

    assert _cite(root, "c-2024", "--format", "ris") == 0
    ris = capsys.readouterr().out
    assert ris.startswith("TY  - DATA\r\n") and f"SHA-256 {digest}" in ris

    assert _cite(root, "c-2024", "--format", "mla") == 0
    assert f"SHA-256 {digest}" in capsys.readouterr().out

    # IEEE (and Harvard) print no archive field: they lost the identifier and the digest
    for style in ("ieee", "harvard-cite-them-right"):
        assert _cite(root, "c-2024", "--format", style) == 0
        cited = capsys.readouterr().out
        assert f"urn:archiver:{library.id}:edition:c-2024" in cited, cited
        assert f"WACZ out.wacz, SHA-256 {digest}." in cited, cited
        assert cited.count("\n") == 1


def test_a_reopened_edition_says_it_is_not_accepted(
    root: str, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    library.editions.reopen("c-2024")
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    assert "Needs review, not accepted" in capsys.readouterr().out


def test_what_an_edition_cannot_be_cited_as(root: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cite(root, "c-2024", "--format", "robust-link") == 2
    assert "an edition has no web address" in capsys.readouterr().err
    assert _cite(root, "c-2024", "1") == 2
    assert "cite editions and captures in separate commands" in capsys.readouterr().err
    assert _cite(root, "nothing") != 0
    assert "no capture or edition 'nothing' in this library" in capsys.readouterr().err
    assert _cite(root, "99") != 0  # was "no capture '99'": cite takes an edition's name too
    assert "no capture or edition '99' in this library" in capsys.readouterr().err
    assert _cite(root, "c-2024", "99") != 0  # not "cite editions and captures separately"
    assert "no capture or edition '99' in this library" in capsys.readouterr().err


def _export(root: str, wacz: Path) -> str:
    assert cli.main(["--library", root, "edition", "export", "c-2024", str(wacz)]) == 0
    return hashlib.sha256(wacz.read_bytes()).hexdigest()


def _members(wacz: Path) -> set[str]:
    import zipfile

    with zipfile.ZipFile(wacz) as z:
        lines = z.read("pages/pages.jsonl").decode().splitlines()[1:]
    return {json.loads(line)["ts"] + " " + json.loads(line)["url"] for line in lines}


def test_a_draft_made_while_reopened_is_not_cited_for_the_accepted_edition(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.importers.warcs import import_warc_file
    from tests.helpers.warcs import Resp, html_page, write_warc

    first = library.editions.coverage("c-2024")
    old = next(t.snapshot_id for t in first.targets if t.url.endswith("/page0"))
    later = Resp("https://example.org/page0", html_page("Page 0, later", "river"),
                 date="2024-05-01T10:00:00Z")  # fmt: skip
    import_warc_file(library, write_warc(tmp_path / "later.warc.gz", [later]), collection="c")
    accepted_release = _export(root, tmp_path / "accepted.wacz")
    assert not library.editions.reopen("c-2024").refused  # page0: the later capture now
    draft = tmp_path / "draft2.wacz"
    draft_digest = _export(root, draft)
    assert _members(draft) != _members(tmp_path / "accepted.wacz")
    assert not library.editions.choose_member("c-2024", "https://example.org/page0", old).refused
    assert not library.editions.accept("c-2024").refused
    capsys.readouterr()

    assert _cite(root, "c-2024") == 0
    out, err = capsys.readouterr()
    assert draft_digest not in out and accepted_release not in out
    assert "draft" not in out and "SHA-256" not in out
    assert "[Web archive edition, accepted " in out
    assert "edition c-2024 has no release since it was accepted on " in err
    assert "archiver edition export c-2024 OUT.wacz" in err

    final = _export(root, tmp_path / "final.wacz")
    assert _members(tmp_path / "final.wacz") == _members(tmp_path / "accepted.wacz")
    capsys.readouterr()
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    out, err = capsys.readouterr()
    assert f"WACZ final.wacz, SHA-256 {final}}}" in out and err == ""


def test_a_draft_of_the_same_members_is_not_the_accepted_release(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not library.editions.reopen("c-2024").refused
    digest = _export(root, tmp_path / "draft.wacz")
    capsys.readouterr()
    assert _cite(root, "c-2024", "--format", "bibtex") == 0  # not accepted: its draft
    assert f"WACZ draft.wacz (needs\\_review draft), SHA-256 {digest}" in capsys.readouterr().out

    assert not library.editions.accept("c-2024").refused
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    out, err = capsys.readouterr()
    assert "draft.wacz" not in out and digest not in out
    assert "has no release since it was accepted" in err


def test_the_edition_and_collection_names_are_cited_as_typed(
    root: str, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    """MLA and Chicago title-cased the edition's name, an identifier ("C-2024: Edition of
    the Collection C"), which APA gave as typed: every style spells the names alike."""
    from archiver_app.store.models import Collection

    with library.session() as s:
        cid = s.query(Collection).filter_by(slug="c").one().id
    library.collections.rename(cid, "rivers of the eU")  # a name as its owner typed it
    cited = {}
    for style in ("apa", "mla", "chicago"):
        assert _cite(root, "c-2024", "--format", style) == 0
        cited[style] = capsys.readouterr().out
    accepted = library.editions.get("c-2024").accepted_at
    assert accepted is not None
    named = "c-2024: edition of the collection rivers of the eU, 2024"
    assert cited["apa"].startswith(
        f"rivers of the eU. ({accepted:%Y}). {named} [Web archive edition"
    )
    titled = "“c-2024: Edition of the Collection rivers of the eU, 2024.”"
    assert cited["mla"].startswith(f"rivers of the eU. {titled} Web archive edition")
    assert cited["chicago"].startswith(
        f"rivers of the eU. {accepted:%Y}. {titled} Web archive edition"
    )


def _later_page0(library: Library, warc: Path, title: str) -> int:
    """Import a capture of page0 made after the edition's (its member now); its id."""
    from archiver_app.importers.warcs import import_warc_file
    from tests.helpers.warcs import Resp, html_page, write_warc

    page = Resp("https://example.org/page0", html_page(title, "river"), date="2024-05-01T10:00:00Z")
    import_warc_file(library, write_warc(warc, [page]), collection="c")
    library.editions.refresh("c-2024")  # not accepted: its members follow the library
    targets = library.editions.coverage("c-2024").targets
    member = next(t.snapshot_id for t in targets if t.url.endswith("/page0"))
    assert member is not None
    return member


def test_a_draft_holding_a_capture_deleted_since_is_not_cited(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A draft's members were told by their ids: SQLite gave a deleted last row's id to
    the next capture (before migration 0014), so after the newest member was deleted and
    the page captured again, the draft holding the deleted capture was cited as the
    edition as it is now."""
    assert not library.editions.reopen("c-2024").refused
    deleted = _later_page0(library, tmp_path / "later.warc.gz", "Page 0, later")
    digest = _export(root, tmp_path / "draft.wacz")
    assert library.snapshots.delete([deleted])[0].deleted == [deleted]
    with library.write() as s:  # as before migration 0014, which keeps the highest id given
        s.execute(text("UPDATE id_high_water SET high = :h"), {"h": deleted - 1})
    again = _later_page0(library, tmp_path / "again.warc.gz", "Page 0, captured again")
    assert again == deleted  # the id given again: another capture
    capsys.readouterr()

    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    out = capsys.readouterr().out
    assert "draft.wacz" not in out and digest not in out and "SHA-256" not in out

    final = _export(root, tmp_path / "final.wacz")  # of the members it has now: cited
    capsys.readouterr()
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    assert f"WACZ final.wacz (needs\\_review draft), SHA-256 {final}" in capsys.readouterr().out


def test_a_release_recorded_with_its_members_ids_is_still_told_by_them(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Releases recorded before digests of uids hold one of ids: compared as such."""
    from sqlalchemy import select

    from archiver_app.editions.ledger import member_snapshot_ids
    from archiver_app.editions.release import ids_digest
    from archiver_app.editions.service import get_edition
    from archiver_app.store.models import Job

    assert not library.editions.reopen("c-2024").refused
    digest = _export(root, tmp_path / "draft.wacz")
    with library.write() as s:
        job = s.scalars(select(Job).where(Job.kind == "export")).one()
        assert job.result is not None and job.result["members_digest"].startswith("uid:")
        ids = member_snapshot_ids(s, get_edition(s, "c-2024").id)
        job.result = {**job.result, "members_digest": ids_digest(ids)}
    capsys.readouterr()

    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    assert f"WACZ draft.wacz (needs\\_review draft), SHA-256 {digest}" in capsys.readouterr().out

    _later_page0(library, tmp_path / "later.warc.gz", "Page 0, later")  # members changed
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    assert "draft.wacz" not in capsys.readouterr().out


def test_the_styles_say_the_editions_dates_in_words(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Chicago gave "… Web archive edition, accepted 2026-11-29. November 29. urn:…": an
    ISO date in a sentence, and the day again with nothing before it."""
    accepted = library.editions.get("c-2024").accepted_at
    assert accepted is not None
    us = f"{accepted:%B} {accepted.day}, {accepted.year}"
    assert _cite(root, "c-2024", "--format", "chicago") == 0
    chicago = capsys.readouterr().out
    assert f"” Web archive edition, accepted {us}. urn:archiver:{library.id}:edition:" in chicago
    assert (
        f"{accepted:%Y-%m-%d}" not in chicago and f". {accepted:%B} {accepted.day}." not in chicago
    )
    assert _cite(root, "c-2024", "--format", "apa") == 0
    assert f"[Web archive edition, accepted {us}]" in capsys.readouterr().out

    _export(root, tmp_path / "out.wacz")
    released = library.clock()
    capsys.readouterr()
    assert _cite(root, "c-2024", "--format", "mla") == 0
    mla = capsys.readouterr().out
    said = f"released {released:%B} {released.day}, {released.year}"
    assert f"Web archive edition, accepted {us}, {said}." in mla or (
        f"Web archive edition, accepted and {said}." in mla
    ), mla
    from datetime import datetime

    from archiver_app.cite.formats import date_in_words

    day = datetime(2026, 11, 29)
    assert date_in_words(day, "harvard-cite-them-right") == "29 November 2026"  # en-GB
    assert date_in_words(day, "chicago") == "November 29, 2026"
    # the machine formats keep the dates as data
    assert _cite(root, "c-2024", "--format", "bibtex") == 0
    assert f"date = {{{released:%Y-%m-%d}}}" in capsys.readouterr().out


def test_an_unsigned_export_never_takes_a_signed_releases_place_and_each_export_says(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unsigned scratch copy exported after a signed release silently became the
    release `cite` quotes, and nothing said the release cited had changed; `edition show`
    listed no release. Now the newest signed release is cited (else the newest), each
    export says what it did to the release cited, and `show` lists them all."""

    def export(out: Path, *extra: str) -> tuple[str, str]:
        args = ["--library", root, "edition", "export", "c-2024", str(out), *extra]
        assert cli.main(args) == 0
        said = capsys.readouterr().out
        return hashlib.sha256(out.read_bytes()).hexdigest(), said

    def cited() -> str:
        assert _cite(root, "c-2024", "--format", "bibtex") == 0
        return capsys.readouterr().out

    rel = tmp_path / "rel"
    rel.mkdir()
    signed, said = export(rel / "signed.wacz", "--sign")
    assert "It is the release to cite: `archiver cite c-2024` quotes its SHA-256." in said
    scratch, said = export(rel / "scratch.wacz")
    assert (
        "It is not the release to cite: `archiver cite c-2024` still quotes the signed release "
        f"{rel / 'signed.wacz'} (SHA-256 {signed}, signed); an unsigned release never takes a "
        "signed one's place (sign a new release to replace it)."
    ) in said
    assert f"WACZ signed.wacz, SHA-256 {signed}" in cited()
    there = library.editions.release_in_place(rel / "scratch.wacz")
    assert there is not None and not there.accepted
    assert there.what == "a release of accepted edition c-2024, not the one cited"

    second, said = export(rel / "second.wacz", "--sign")
    assert (
        f"It is now the release to cite, in place of {rel / 'signed.wacz'} (SHA-256 {signed}, "
        "signed): `archiver cite c-2024` quotes the new SHA-256."
    ) in said
    assert f"WACZ second.wacz, SHA-256 {second}" in cited()

    assert cli.main(["--library", root, "edition", "show", "c-2024"]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if "release" in line]
    assert shown[0] == (
        "  releases, newest first (`archiver cite c-2024` quotes the one marked cited):"
    )
    dated = re.compile(r"  \d{4}-\d\d-\d\d \d\d:\d\d UTC  ")
    assert all(dated.search(line) for line in shown[1:]), shown
    assert [dated.sub(" ", line).split()[1:] for line in shown[1:]] == [
        ["cited", "signed", str(rel / "second.wacz"), "sha256", second],
        ["unsigned", str(rel / "scratch.wacz"), "sha256", scratch, "(unsigned:", "the",
         "signed", "release", "is", "cited)"],
        ["signed", str(rel / "signed.wacz"), "sha256", signed, "(an", "earlier", "release:",
         "a", "later", "one", "is", "cited)"],
    ]  # fmt: skip

    # Written over by an unsigned release, the signed one is gone: the one before is cited.
    _, said = export(rel / "second.wacz", "--overwrite")
    assert f"it wrote over {rel / 'second.wacz'} (SHA-256 {second}, signed), and" in said
    assert f"now quotes the signed release {rel / 'signed.wacz'} (SHA-256 {signed}" in said
    assert f"WACZ signed.wacz, SHA-256 {signed}" in cited()
