"""RFC 3161 timestamps of signed exports, against a local authority (``openssl ts``).

Round trip through ``archiver export --sign --timestamp`` and ``verify-export --tsa-cert``;
a timestamp for another signature, a root that is not the authority's, an authority that
answers garbage or refuses, and one that is down then back (the queued request retried).
"""

from __future__ import annotations

import base64
import json
import socket
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.export.der_order import in_der_order
from archiver_app.export.pending import PENDING_KEY, pending, retry_pending
from archiver_app.export.signing import Difference, verify_wacz
from archiver_app.export.timestamps import (
    StampCode,
    TimestampState,
    add_timestamp,
    load_roots,
    request_timestamp,
)
from archiver_app.importers.warcs import import_warc_file
from archiver_app.library import Library
from tests.helpers.tsa import LocalTSA, make_authority
from tests.helpers.warcs import site, write_warc


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalTSA]:
    authority = LocalTSA(tmp_path_factory.mktemp("tsa")).start()
    try:
        yield authority
    finally:
        authority.stop()


@pytest.fixture(autouse=True)
def _answers_well(tsa: LocalTSA) -> None:
    tsa.mode = "ok"


@pytest.fixture
def root(library: Library, tmp_path: Path) -> str:
    import_warc_file(library, write_warc(tmp_path / "site.warc.gz", site(2)), collection="c")
    return str(library.root)


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/tsa"  # nothing listens there: connection refused


def _export(root: str, out: Path, *extra: str) -> int:
    args = ["export", "--collection", "c", "-o", str(out), "--sign", *extra]
    return cli.main([*args, "--library", root])


def _members(wacz: Path) -> dict[str, tuple[bytes, int]]:
    with zipfile.ZipFile(wacz) as zf:
        return {i.filename: (zf.read(i), i.compress_type) for i in zf.infolist()}


def _signed(wacz: Path) -> dict[str, str]:
    with zipfile.ZipFile(wacz) as zf:
        return dict(json.loads(zf.read("datapackage-digest.json"))["signedData"])


def test_round_trip(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp", tsa.url) == 0
    assert "timestamped at " in capsys.readouterr().out
    signed = _signed(wacz)
    assert signed["timeSignature"] and "BEGIN CERTIFICATE" in signed["timestampCert"]
    report = verify_wacz(wacz, tsa_roots=load_roots(tsa.root))
    assert report.ok and report.timestamp.state is TimestampState.VALID
    assert report.timestamp.time is not None and "TSA" in (report.timestamp.authority or "")
    assert cli.main(["verify-export", str(wacz), "--tsa-cert", str(tsa.root)]) == 0
    out = capsys.readouterr().out
    assert "timestamp: valid;" in out and "intact" in out
    # Without a root the imprint is still checked; the authority is not.
    assert verify_wacz(wacz).timestamp.state is TimestampState.UNCHECKED


def test_another_authority_is_not_trusted(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp", tsa.url) == 0
    stranger = make_authority(tmp_path / "stranger", name="Stranger") / "ca.pem"
    report = verify_wacz(wacz, tsa_roots=load_roots(stranger))
    assert report.timestamp.state is TimestampState.INVALID and not report.ok
    assert [f.kind for f in report.findings] == [Difference.TIMESTAMP_INVALID]
    assert cli.main(["verify-export", str(wacz), "--tsa-cert", str(stranger)]) == 1
    out = capsys.readouterr().out
    assert "the timestamp does not chain to the given root certificate" in out
    assert "changed:" not in out and "ErrorStack" not in out  # no file changed


def test_a_timestamp_of_another_signature_is_rejected(
    root: str, tsa: LocalTSA, tmp_path: Path
) -> None:
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz) == 0
    other = request_timestamp(b"some other signature", tsa.url)
    assert other.code is StampCode.STAMPED and other.token is not None
    add_timestamp(wacz, other.token)  # a token, valid in itself, over other bytes
    report = verify_wacz(wacz, tsa_roots=load_roots(tsa.root))
    assert report.signature_valid and report.timestamp.state is TimestampState.INVALID
    assert report.timestamp.message == "the timestamp is for another signature"
    assert not report.ok


@pytest.mark.parametrize("mode", ["garbage", "rejection"])
def test_a_bad_answer_leaves_it_signed_and_says_so(
    root: str, tsa: LocalTSA, tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tsa.mode = mode
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp", tsa.url) == 0
    assert "signed but NOT timestamped" in capsys.readouterr().err
    report = verify_wacz(wacz)
    assert report.ok and report.signature_valid
    assert report.timestamp.state is TimestampState.NONE
    assert "timeSignature" not in _signed(wacz)
    with Library.open(Path(root)) as lib:
        assert pending(lib) == []  # garbage is not asked for again


def test_no_network_queues_then_retries(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out.wacz"
    down = _closed_port()
    assert _export(root, wacz, "--timestamp", down) == 0
    assert "timestamp waiting" in capsys.readouterr().out
    assert verify_wacz(wacz).ok and "timeSignature" not in _signed(wacz)
    members = _members(wacz)
    with Library.open(Path(root)) as lib:
        [entry] = pending(lib)
        assert entry.path == wacz.resolve() and entry.url == down
        assert "cannot reach" in entry.last_error
        assert entry.attempts == 1  # the export's own request
    assert cli.main(["export", "timestamp-pending", "--list", "--library", root]) == 0
    assert ", 1 try: cannot reach " in capsys.readouterr().out
    # Still down: the request stays queued and the command says so.
    assert cli.main(["export", "timestamp-pending", "--library", root]) == 1
    assert "waiting" in capsys.readouterr().out
    assert cli.main(["export", "timestamp-pending", "--list", "--library", root]) == 0
    listed = capsys.readouterr().out
    assert f"{wacz.resolve()}: from {down}, since " in listed and ", 2 tries: " in listed
    with Library.open(Path(root)) as lib:
        assert pending(lib)[0].attempts == 2
        # The authority is back (at its address; here: point the queued entry at it).
        with lib.write() as s:
            from archiver_app.store.models import Setting

            row = s.get(Setting, PENDING_KEY)
            assert row is not None
            row.value = [{**row.value[0], "url": tsa.url}]
    assert cli.main(["export", "timestamp-pending", "--library", root]) == 0
    assert ": added: timestamped at " in capsys.readouterr().out
    # Rewritten in place: every other member as it was, the WARC still stored, not deflated.
    again = _members(wacz)
    assert {n: d for n, (d, _) in again.items() if n != "datapackage-digest.json"} == {
        n: d for n, (d, _) in members.items() if n != "datapackage-digest.json"
    }
    assert again["archive/data.warc.gz"][1] == zipfile.ZIP_STORED
    report = verify_wacz(wacz, tsa_roots=load_roots(tsa.root))
    assert report.ok and report.timestamp.state is TimestampState.VALID
    with Library.open(Path(root)) as lib:
        assert pending(lib) == []
        assert retry_pending(lib) == []


def test_a_replaced_export_is_not_stamped(root: str, tsa: LocalTSA, tmp_path: Path) -> None:
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp", _closed_port()) == 0
    assert _export(root, wacz, "--overwrite") == 0  # another signature under the same name
    with Library.open(Path(root)) as lib:
        with lib.write() as s:
            from archiver_app.store.models import Setting

            row = s.get(Setting, PENDING_KEY)
            assert row is not None
            row.value = [{**row.value[0], "url": tsa.url}]
        [result] = retry_pending(lib)
        assert result.code == "gone" and pending(lib) == []
    assert "timeSignature" not in _signed(wacz)


def test_default_authority_and_clear_errors(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp") == 2  # no default yet: a clear error
    assert "archiver export timestamp-authority URL" in capsys.readouterr().err
    assert cli.main(["export", "timestamp-authority", tsa.url, "--library", root]) == 0
    assert _export(root, wacz, "--timestamp") == 0
    assert base64.b64decode(_signed(wacz)["timeSignature"])
    assert cli.main(["export", "--collection", "c", "-o", str(wacz), "--overwrite",
                     "--timestamp", tsa.url, "--library", root]) == 2  # fmt: skip
    assert "add --sign" in capsys.readouterr().err


def test_an_unavailable_authority_is_asked_once_per_retry(
    root: str, tsa: LocalTSA, tmp_path: Path
) -> None:
    tsa.mode = "unavailable"  # HTTP 503: worth retrying, like no network
    first, second = tmp_path / "one.wacz", tmp_path / "two.wacz"
    for out in (first, second):
        assert _export(root, out, "--timestamp", tsa.url) == 0
    asked = tsa.requests
    with Library.open(Path(root)) as lib:
        assert [e.path for e in pending(lib)] == [first.resolve(), second.resolve()]
        results = retry_pending(lib)
        assert [r.code for r in results] == ["waiting", "waiting"]
        assert tsa.requests == asked + 1  # the second export did not wait for it again
        tsa.mode = "ok"
        assert [r.code for r in retry_pending(lib)] == ["added", "added"]
        assert pending(lib) == []
    for out in (first, second):
        report = verify_wacz(out, tsa_roots=load_roots(tsa.root))
        assert report.ok and report.timestamp.state is TimestampState.VALID


def test_a_waiting_timestamp_can_be_given_up(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An authority that will never answer (mistyped, gone): the wait ends on request."""
    wacz = tmp_path / "out.wacz"
    assert _export(root, wacz, "--timestamp", _closed_port()) == 0
    capsys.readouterr()
    args = ["export", "timestamp-pending", "--library", root, "--forget"]
    assert cli.main([*args, str(wacz)]) == 0
    assert "no longer waiting for its timestamp" in capsys.readouterr().out
    with Library.open(Path(root)) as lib:
        assert pending(lib) == []
    assert verify_wacz(wacz).ok  # still signed
    assert cli.main([*args, str(wacz)]) == 2
    assert "no timestamp is waiting" in capsys.readouterr().err


def test_an_authority_that_sends_its_chain_is_accepted(
    root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenSSL (and real authorities) send the chain in its own order, not DER's sorted one:
    the answer is taken, the token verifies against the right root and not a stranger's."""
    from rfc3161_client import decode_timestamp_response

    chained = LocalTSA(tmp_path / "chained", chain=True).start()
    try:
        wacz = tmp_path / "out.wacz"
        assert _export(root, wacz, "--timestamp", chained.url) == 0
        captured = capsys.readouterr()
        assert "timestamped at " in captured.out and "NOT timestamped" not in captured.err
        with pytest.raises(ValueError, match="InvalidSetOrdering"):  # what it answered
            decode_timestamp_response(chained.last_answer)
        raw = chained.last_answer
    finally:
        chained.stop()
    assert _signed(wacz)["timestampCert"].count("BEGIN CERTIFICATE") == 2
    assert cli.main(["verify-export", str(wacz), "--tsa-cert", str(chained.root)]) == 0
    assert "timestamp: valid;" in capsys.readouterr().out
    stranger = make_authority(tmp_path / "stranger", name="Stranger") / "ca.pem"
    assert cli.main(["verify-export", str(wacz), "--tsa-cert", str(stranger)]) == 1
    assert "timestamp: invalid;" in capsys.readouterr().out
    # A token kept in the authority's own order (another tool wrote it) reads the same.
    add_timestamp(wacz, raw)
    report = verify_wacz(wacz, tsa_roots=load_roots(chained.root))
    assert report.ok and report.timestamp.state is TimestampState.VALID


@pytest.mark.parametrize(
    "answer",
    [b"<html>not a timestamp</html>", bytes.fromhex("30053003020102"), b"\x30\x80\x00\x00", b""],
)
def test_what_is_no_answer_to_sort_is_left_as_it_came(answer: bytes) -> None:
    assert in_der_order(answer) == answer  # garbage, a refusal, BER, nothing


def test_a_root_given_for_a_timestamp_that_is_not_there_is_not_intact(
    root: str, tsa: LocalTSA, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--tsa-cert`` asks for a timestamp checked against that root: none is no pass."""
    signed, unsigned = tmp_path / "signed.wacz", tmp_path / "unsigned.wacz"
    assert _export(root, signed) == 0
    assert cli.main(["export", "--collection", "c", "-o", str(unsigned), "--library", root]) == 0
    capsys.readouterr()
    assert cli.main(["verify-export", str(signed)]) == 0  # without a root, none is fine
    capsys.readouterr()
    assert cli.main(["verify-export", str(signed), "--tsa-cert", str(tsa.root)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-3] == "timestamp: none, but one was asked for (a trust root was given)"
    assert out[-1].startswith(f"{signed}: intact, but not timestamped (")
    assert cli.main(["verify-export", str(unsigned), "--tsa-cert", str(tsa.root)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "timestamp: the export is not signed, so it has no timestamp to check" in out
    assert out[-1].startswith(f"{unsigned}: intact, but not timestamped (")
    report = verify_wacz(signed, tsa_roots=load_roots(tsa.root))
    assert [f.kind for f in report.findings] == [Difference.TIMESTAMP_MISSING]
    assert not report.ok and report.as_signed
