"""A signed edition release can carry a trusted timestamp, as any signed export can
(``export/timestamps.py`` against a local ``openssl ts`` authority; ``export/pending.py``
when the authority cannot be reached)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.export.pending import pending
from archiver_app.export.signing import verify_wacz
from archiver_app.export.timestamps import TimestampState, load_roots
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.tsa import LocalTSA
from tests.helpers.warcs import site, write_warc


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalTSA]:
    authority = LocalTSA(tmp_path_factory.mktemp("tsa")).start()
    try:
        yield authority
    finally:
        authority.stop()


@pytest.fixture
def root(library: Library, tmp_path: Path) -> str:
    import_warc_file(library, write_warc(tmp_path / "site.warc.gz", site(2)), collection="c")
    pages = "".join(f"https://example.org/page{i}\n" for i in range(2))
    library.editions.create("c", "c-2024", year=2024, targets_text=pages)
    return str(library.root)


def _release(root: str, out: Path, *extra: str) -> int:
    return cli.main(["--library", root, "edition", "export", "c-2024", str(out), *extra])


def test_a_signed_release_is_timestamped(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out" / "c-2024.wacz"
    wacz.parent.mkdir()
    assert _release(root, wacz, "--sign", "--timestamp", tsa.url) == 0
    assert "timestamped at " in capsys.readouterr().out
    report = verify_wacz(wacz, tsa_roots=load_roots(tsa.root))
    assert report.ok and report.timestamp.state is TimestampState.VALID
    assert (wacz.parent / "c-2024.coverage.json").exists()  # the reports are still beside it


def test_without_network_the_release_is_signed_and_its_timestamp_waits(
    root: str, library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}/tsa"  # nothing listens there
    wacz = tmp_path / "c-2024.wacz"
    assert _release(root, wacz, "--sign", "--timestamp", down) == 0
    assert "timestamp waiting" in capsys.readouterr().out
    assert verify_wacz(wacz).ok
    assert [(p.path, p.url) for p in pending(library)] == [(wacz, down)]


def test_a_timestamp_needs_a_signature_and_an_authority(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "c-2024.wacz"
    assert _release(root, wacz, "--timestamp", "http://127.0.0.1:9/tsa") != 0
    assert "add --sign" in capsys.readouterr().err
    assert _release(root, wacz, "--sign", "--timestamp") != 0  # no default authority set
    assert "needs an authority" in capsys.readouterr().err
    assert not wacz.exists()


def test_a_timestamp_added_later_is_in_the_digest_the_edition_is_cited_with(
    root: str, library: Library, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export timestamp-pending`` rewrote the release to put its timestamp in, and ``cite``
    went on quoting the SHA-256 the file had before, with no word that it changed."""
    import hashlib

    from archiver_app.export.pending import PENDING_KEY
    from archiver_app.store.models import Setting

    assert not library.editions.accept("c-2024").refused
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}/tsa"  # nothing listens there
    wacz = tmp_path / "late.wacz"
    assert _release(root, wacz, "--sign", "--timestamp", down) == 0
    before = hashlib.sha256(wacz.read_bytes()).hexdigest()
    assert f"sha256 {before}" in capsys.readouterr().out
    with library.write() as s:  # the authority is back (here: the queued entry points at it)
        row = s.get(Setting, PENDING_KEY)
        assert row is not None
        row.value = [{**row.value[0], "url": tsa.url}]

    assert cli.main(["--library", root, "export", "timestamp-pending"]) == 0
    after = hashlib.sha256(wacz.read_bytes()).hexdigest()
    assert after != before
    said = capsys.readouterr().out
    assert "late.wacz: added: timestamped at " in said
    assert f"its SHA-256 changed: {before} -> {after}" in said
    assert "the release of edition c-2024 on record now has the new one" in said

    assert cli.main(["--library", root, "cite", "c-2024", "--format", "bibtex"]) == 0
    out, err = capsys.readouterr()
    assert f"WACZ late.wacz, SHA-256 {after}" in out and before not in out and err == ""
