"""Signed WACZ: the key, the signature ReplayWeb.page checks, and every kind of tampering."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from archiver_app import cli
from archiver_app.errors import InputError
from archiver_app.export.signing import (
    Difference,
    SigningKeyError,
    fingerprint,
    load_or_create_key,
    signed_digest,
    verify_wacz,
)
from archiver_app.importers.outcome import PackageCheck

WARC = b"WARC/1.1\r\nWARC-Type: resource\r\n\r\nhello harbour" * 50


def _package(files: dict[str, bytes]) -> bytes:
    resources = [
        {"name": n, "path": n, "hash": "sha256:" + hashlib.sha256(d).hexdigest(), "bytes": len(d)}
        for n, d in files.items()
    ]
    return json.dumps({"profile": "data-package", "resources": resources}, indent=2).encode()


def write_wacz(path: Path, key_dir: Path, files: dict[str, bytes] | None = None) -> None:
    files = files or {"archive/data.warc": WARC, "pages/pages.jsonl": b'{"url": "x"}\n'}
    package = _package(files)
    digest = signed_digest(package, load_or_create_key(key_dir))
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("datapackage.json", package)
        zf.writestr("datapackage-digest.json", json.dumps(digest))


def _rewrite(path: Path, change: dict[str, bytes | None]) -> None:
    with zipfile.ZipFile(path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    for name, data in change.items():
        if data is None:
            entries.pop(name)
        else:
            entries[name] = data
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)


def test_the_key_is_made_once_and_private(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path)
    path = tmp_path / "signing-key.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = load_or_create_key(tmp_path)
    assert again.private_numbers() == key.private_numbers()


def test_an_unreadable_key_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "signing-key.pem").write_text("not a key")
    with pytest.raises(SigningKeyError, match="cannot read the signing key"):
        load_or_create_key(tmp_path)


def test_round_trip_names_the_signer(tmp_path: Path) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    report = verify_wacz(wacz)
    assert report.ok and report.signed and report.signature_valid
    assert report.files_checked == 2
    digest = json.loads(zipfile.ZipFile(wacz).read("datapackage-digest.json"))
    signed = digest["signedData"]
    assert signed["hash"] == digest["hash"]
    assert len(__import__("base64").b64decode(signed["signature"])) == 96  # raw r||s, P-384
    assert report.public_key == signed["publicKey"]
    assert len(fingerprint(signed["publicKey"]).split(":")) == 8


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            {"archive/data.warc": WARC[:-1] + b"!"},
            "archive/data.warc was changed (its hash differs)",
        ),
        ({"extra/notes.txt": b"added"}, "extra/notes.txt was added (not in datapackage.json)"),
        ({"pages/pages.jsonl": None}, "pages/pages.jsonl is listed but missing"),
    ],
)
def test_tampering_is_named(tmp_path: Path, change: dict[str, bytes | None], said: str) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    _rewrite(wacz, change)
    report = verify_wacz(wacz)
    assert not report.ok
    assert said in report.problems
    assert report.signature_valid  # the signed datapackage itself is untouched
    if "missing" in said:  # counted as listed and not checked, and said why
        assert report.lines()[-1].endswith("(1 of 2 files checked; 1 missing)"), report.lines()


def test_the_count_says_why_listed_files_were_not_checked(tmp_path: Path) -> None:
    """A file listed with a hash other than sha256 or sha512 is not checked: the count line
    says so, beside a missing one (it said "1 of 3 files checked" and left the reader to
    add up the findings)."""
    wacz = tmp_path / "x.wacz"
    files = {"archive/data.warc": WARC, "pages/pages.jsonl": b"{}\n", "logs/a.log": b"log"}
    write_wacz(wacz, tmp_path, files)
    package = json.loads(zipfile.ZipFile(wacz).read("datapackage.json"))
    package["resources"][2]["hash"] = "crc32:0badf00d"
    _rewrite(wacz, {"datapackage.json": json.dumps(package).encode(), "pages/pages.jsonl": None})
    report = verify_wacz(wacz)
    assert "logs/a.log has no usable hash in datapackage.json" in report.problems
    assert report.lines()[-1].endswith(
        "(1 of 3 files checked; 1 missing, 1 without a usable hash)"
    ), report.lines()


def test_an_edited_datapackage_breaks_hash_and_signature(tmp_path: Path) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    forged = _package({"archive/data.warc": b"other", "pages/pages.jsonl": b""})
    _rewrite(wacz, {"datapackage.json": forged})
    report = verify_wacz(wacz)
    assert "datapackage.json was changed (its hash differs)" in report.problems
    assert "the signature is for another datapackage.json" in report.problems
    assert not report.ok


def test_a_signature_by_another_key_is_refused(tmp_path: Path) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path / "mine")
    with zipfile.ZipFile(wacz) as zf:
        package = zf.read("datapackage.json")
    other = signed_digest(package, load_or_create_key(tmp_path / "other"))
    digest = json.loads(zipfile.ZipFile(wacz).read("datapackage-digest.json"))
    digest["signedData"]["signature"] = other["signedData"]["signature"]
    _rewrite(wacz, {"datapackage-digest.json": json.dumps(digest).encode()})
    report = verify_wacz(wacz)
    assert not report.signature_valid and not report.ok
    assert "the signature does not match the signed data or key" in report.problems
    named = fingerprint(report.public_key or "")  # --key of the key it names: not vouched for
    lines = verify_wacz(wacz, key=named).lines()
    assert f"key: the signature names {named}, the key asked for, but is NOT valid" in lines


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    assert cli.main(["verify-export", str(wacz)]) == 0
    out = capsys.readouterr().out
    assert ": the signature is valid\n" in out and "intact (2 files checked)" in out
    _rewrite(wacz, {"archive/data.warc": b"x"})
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out
    assert "changed: archive/data.warc was changed" in out
    # once this said "signature: valid": the signature vouches for what was signed, and the
    # line says so in import's words
    valid_but = (
        ": the signature is valid, but the package is NOT as signed: it was altered after signing"
    )
    assert valid_but + "\n" in out and ": the signature is valid\n" not in out


def test_the_signature_is_dated_as_the_package_it_signs(tmp_path: Path) -> None:
    """``signedData.created`` is the package's ``created`` (validators refuse a WACZ whose
    two dates differ, which a clock read at signing time made happen at a second's edge)."""
    package = json.dumps({"profile": "data-package", "created": "2020-01-02T03:04:05Z"})
    digest = signed_digest(package.encode(), load_or_create_key(tmp_path / "key"))
    assert digest["signedData"]["created"] == "2020-01-02T03:04:05Z"


def test_when_and_by_what_it_was_signed_are_the_packages_not_a_forged_copy(
    tmp_path: Path,
) -> None:
    """The signing time and software beside the signature are covered by nothing: one
    rewritten to backdate a signed export was shown as signed then, "intact"."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    with zipfile.ZipFile(wacz) as zf:
        package = json.loads(zf.read("datapackage.json"))
    package |= {"created": "2026-11-29T01:36:28Z", "software": "Archiver 1.0"}
    package_bytes = json.dumps(package).encode()
    digest = signed_digest(package_bytes, load_or_create_key(tmp_path))
    _rewrite(wacz, {"datapackage.json": package_bytes,
                    "datapackage-digest.json": json.dumps(digest).encode()})  # fmt: skip
    report = verify_wacz(wacz)
    assert report.ok, report.lines()
    assert "on 2026-11-29T01:36:28Z by Archiver 1.0: the signature is valid" in report.lines()[-4]

    digest["signedData"] |= {"created": "2019-01-01T00:00:00Z", "software": "Trusted 9.9"}
    _rewrite(wacz, {"datapackage-digest.json": json.dumps(digest).encode()})
    report = verify_wacz(wacz)
    assert not report.ok
    assert [f.kind for f in report.findings] == [Difference.SIGNED_TIME]
    assert report.findings[0].message == (
        "the signing time beside the signature (2019-01-01T00:00:00Z) is not the package's "
        "(2026-11-29T01:36:28Z): it was changed after signing"
    )
    lines = "\n".join(report.lines())
    assert "2019" not in lines.replace("(2019-01-01T00:00:00Z)", "") and "Trusted" not in lines


def test_a_name_twice_in_the_zip_is_not_intact(tmp_path: Path) -> None:
    """A second pages/pages.jsonl put before the original: the signed, listed one still
    hashes right, but a reader may take the other."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    with zipfile.ZipFile(wacz) as zf:
        entries = [(n, zf.read(n)) for n in zf.namelist()]
    with zipfile.ZipFile(wacz, "w") as zf:
        zf.writestr("pages/pages.jsonl", b'{"url": "https://evil.example/"}\n')
        for name, data in entries:
            if name != "pages/pages.jsonl":
                zf.writestr(name, data)
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("pages/pages.jsonl", dict(entries)["pages/pages.jsonl"])
    report = verify_wacz(wacz)
    assert not report.ok
    assert report.lines()[0] == (
        "changed: pages/pages.jsonl is in the zip 2 times (readers may take either)"
    )


@pytest.mark.parametrize("cut", [0, 1])
def test_a_wacz_cut_short_or_not_a_zip_is_a_verdict_not_an_error(
    tmp_path: Path, cut: int, capsys: pytest.CaptureFixture[str]
) -> None:
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    data = wacz.read_bytes()
    wacz.write_bytes([data[:20], b"not a zip at all"][cut])
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    said = ["x.wacz: the file looks cut short", "x.wacz: not a zip file"][cut]
    assert out[0].startswith(f"damaged: {said}")
    assert out[-1] == f"{wacz}: NOT intact (damaged: cut short or not a zip)"


def test_a_wacz_cut_inside_an_entry_says_what_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cut inside its WARC, it was "the file looks cut short" and nothing more: it says
    where it ends, and what is missing."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    data = wacz.read_bytes()
    wacz.write_bytes(data[: data.index(b"PK\x03\x04", 1) - 10])  # inside the first entry
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("damaged: x.wacz: the file is cut short"), out
    assert "it ends inside 'archive/" in out[0]
    assert "changed: datapackage.json is missing" in out


@pytest.mark.parametrize(
    ("inside", "after"),
    [
        ("archive/data.warc", "no whole entry before the cut; 0 files checked"),
        ("datapackage-digest.json", "3 whole entries before the cut; 2 files checked"),
    ],
)
def test_a_wacz_cut_short_says_so_in_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], inside: str, after: str
) -> None:
    """Its last line was "NOT intact (0 files checked)", the cut said only in its first."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    with zipfile.ZipFile(wacz) as zf:
        info = zf.getinfo(inside)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    wacz.write_bytes(wacz.read_bytes()[: start + info.compress_size // 2])
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("damaged: x.wacz: the file is cut short"), out
    assert out[-1] == f"{wacz}: NOT intact: the file is cut short inside {inside!r} ({after})"


@pytest.mark.parametrize("damage", ["directory", "end"])
def test_a_damaged_zip_directory_is_said_and_the_files_still_checked(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One damaged byte in the zip's central directory (or its end cut off) made the whole
    export "cut short or not a zip": its files are read from their own headers instead."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    data = wacz.read_bytes()
    at = data.index(b"PK\x01\x02")
    wacz.write_bytes(data[:at] + b"\x00" + data[at + 1 :] if damage == "directory" else data[:-30])
    report = verify_wacz(wacz)
    assert [f.kind for f in report.findings] == [Difference.ZIP_DAMAGED]
    assert "central directory" in report.findings[0].message
    assert report.files_checked == 2 and report.signature_valid and report.as_signed
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("damaged: x.wacz: the zip's central directory")
    assert "the signature is valid" in out[1] and "NOT as signed" not in out[1]
    assert out[-1] == (  # not "altered": only the zip's list of its entries is damaged
        f"{wacz}: NOT intact as a file: the zip's central directory is damaged (said above); "
        "the content is as signed (2 files checked)"
    )


def test_a_folder_export_says_what_to_check_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["verify-export", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a WACZ" in err and "archiver export --sign -o NAME.wacz" in err
    assert "Errno" not in err


def test_key_requires_a_signature_by_that_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``verify-export --key FINGERPRINT``: the fingerprint printed after a signed export,
    however grouped or cased; unsigned, or signed by another key, is not intact."""
    mine = tmp_path / "mine.wacz"
    write_wacz(mine, tmp_path / "me")
    key = fingerprint(verify_wacz(mine).public_key or "")
    for given in (key, key.replace(":", "").upper()):
        assert cli.main(["verify-export", str(mine), "--key", given]) == 0
        out = capsys.readouterr().out.splitlines()  # said, as docs/prove.md says
        assert f"key: signed by {key}, the key asked for" in out, out
    theirs = tmp_path / "theirs.wacz"
    write_wacz(theirs, tmp_path / "someone")
    assert cli.main(["verify-export", str(theirs), "--key", key]) == 1
    other = fingerprint(verify_wacz(theirs).public_key or "")
    out = capsys.readouterr().out.splitlines()
    assert f"key: signed by key {other}, not by {key}" in out
    assert "the signature is valid" in out[-4]  # its files are as its own key signed them
    assert out[-1] == f"{theirs}: intact, but not signed by key {key} (2 files checked)"
    unsigned = tmp_path / "unsigned.wacz"
    files = {"archive/data.warc": WARC}
    with zipfile.ZipFile(unsigned, "w") as zf:
        zf.writestr("archive/data.warc", WARC)
        zf.writestr("datapackage.json", _package(files))
        digest = {"path": "datapackage.json",
                  "hash": "sha256:" + hashlib.sha256(_package(files)).hexdigest()}  # fmt: skip
        zf.writestr("datapackage-digest.json", json.dumps(digest))
    assert cli.main(["verify-export", str(unsigned)]) == 0  # intact, only not signed
    assert cli.main(["verify-export", str(unsigned), "--key", key]) == 1
    out = capsys.readouterr().out
    assert "key: the export is not signed" in out
    assert f"{unsigned}: intact, but not signed by key {key} (1 file checked)" in out
    # A changed file still makes it NOT intact, whatever the key.
    _rewrite(theirs, {"archive/data.warc": b"altered"})
    assert cli.main(["verify-export", str(theirs), "--key", key]) == 1
    assert capsys.readouterr().out.splitlines()[-1].endswith(": NOT intact (2 files checked)")


def test_a_key_that_is_no_fingerprint_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--key garbage`` or a shortened fingerprint was taken for one and the export
    reported "signed by key X, not by garbage" (exit 1): it is a usage error (exit 2)
    that says what a fingerprint looks like."""
    mine = tmp_path / "mine.wacz"
    write_wacz(mine, tmp_path / "me")
    key = fingerprint(verify_wacz(mine).public_key or "")
    for given in ("garbage", key[:9], key + "00", key[:-1] + "g", ""):
        assert cli.main(["verify-export", str(mine), "--key", given]) == 2, given
        out, err = capsys.readouterr()
        assert out == "" and f"{given!r} is not a key fingerprint" in err
        assert "32 hexadecimal digits" in err
    with pytest.raises(InputError, match="is not a key fingerprint"):
        verify_wacz(mine, key="49dd:ea43")


def test_checking_says_how_far_it_is_and_stops_when_cancelled(tmp_path: Path) -> None:
    """A multi-gigabyte export takes minutes to hash: the check reports the bytes hashed of
    the listed files' bytes, and Cancel stops it between chunks."""
    from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate

    big = os.urandom(3 << 20)  # three chunks of the reader's 1 MiB
    wacz = tmp_path / "big.wacz"
    write_wacz(wacz, tmp_path / "key", {"archive/data.warc": big})
    updates: list[ProgressUpdate] = []
    report = verify_wacz(wacz, progress=updates.append)
    assert report.ok
    assert updates and updates[-1].done == updates[-1].total
    assert updates[-1].total is not None and updates[-1].total >= len(big)
    assert len(updates) >= 3 and updates[0].done < updates[-1].done

    token = CancelToken()

    def cancel_at_first(update: ProgressUpdate) -> None:
        token.cancel()

    with pytest.raises(Cancelled):
        verify_wacz(wacz, progress=cancel_at_first, cancel=token)


def test_an_export_whose_signature_file_is_gone_does_not_say_plainly_not_signed(
    tmp_path: Path,
) -> None:
    """A signed export whose datapackage-digest.json was lost (deleted, or its name damaged
    in the zip) said "not signed", as if it never was."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    _rewrite(wacz, {"datapackage-digest.json": None})
    lines = verify_wacz(wacz).lines()
    assert "not signed" not in lines
    assert any(line.startswith("not signed as it is: its signature file") for line in lines)
    assert "NOT intact" in lines[-1]


def test_a_byte_altered_inside_a_stored_file_is_said_changed_not_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One byte flipped inside the stored WARC: verify-export said "archive/data.warc
    cannot be read (Bad CRC-32 …)" and "1 of 2 files checked; 1 cannot be read", as if the
    disk had lost it. Its bytes read whole and match neither their hash nor the zip's
    checksum of them: it was changed, and is counted as checked."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    with zipfile.ZipFile(wacz) as zf:
        info = zf.getinfo("archive/data.warc")
    data = bytearray(wacz.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + 100] ^= 0x01
    wacz.write_bytes(bytes(data))
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "changed: archive/data.warc was changed (its hash differs, and the checksum (CRC-32) "
        "the zip stored for it no longer matches its bytes either)"
    ), out
    assert not any("cannot be read" in line for line in out), out
    assert "it was altered after signing" in out[1]
    assert out[-1] == f"{wacz}: NOT intact (2 files checked)"


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("local version", "its version needed to extract is 2.0 (its high byte 0x01) in its "
         "own header, 2.0 in the central directory"),
        ("central time", "its modification time is {} in its own header, {} in the central "
         "directory"),
    ],
)  # fmt: skip
def test_a_byte_damaged_in_an_entrys_header_is_not_intact_as_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, said: str
) -> None:
    """A byte flipped in the first entry's local header ("version needed") or in its
    central directory entry's time: zipfile reads past both, and verify-export said
    "intact" (exit 0) of a file whose bytes are not those exported, while a byte in the
    directory's end record was "NOT intact as a file". The two headers are compared."""
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    data = bytearray(wacz.read_bytes())
    at = 5 if where == "local version" else data.index(b"PK\x01\x02") + 12
    data[at] ^= 0x01  # the time's lowest bit: two seconds
    with zipfile.ZipFile(wacz) as zf:
        written = datetime(*zf.getinfo("archive/data.warc").date_time)
    shown = written + timedelta(seconds=-2 if written.second % 4 else 2)
    said = said.format(f"{written:%Y-%m-%d %H:%M:%S}", f"{shown:%Y-%m-%d %H:%M:%S}")
    wacz.write_bytes(bytes(data))
    assert cli.main(["verify-export", str(wacz)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"damaged: x.wacz: the zip's two headers of archive/data.warc disagree (one is "
        f"damaged): {said}"
    ), out
    assert out[1].endswith(": the signature is valid")
    assert out[-1] == (
        f"{wacz}: NOT intact as a file: the zip's headers of an entry disagree (said above); "
        "the content is as signed (2 files checked)"
    )
    report = verify_wacz(wacz)  # import: the records are as signed, not "altered"
    assert not PackageCheck(tuple(report.findings), True, True, None).tampered


def test_the_files_sha256_is_said_and_checked_against_the_one_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy whose content is as signed but whose bytes are not the file cited (a byte
    added after its end, which zip readers read past) was "intact", and nothing said its
    SHA-256, the digest `archiver cite` quotes. It is printed always; `--sha256 HEX`
    (a citation's digest) says whether the file is that one, byte for byte."""
    nowhere = ["--library", str(tmp_path / "no library")]  # no releases to compare with
    wacz = tmp_path / "x.wacz"
    write_wacz(wacz, tmp_path)
    cited = hashlib.sha256(wacz.read_bytes()).hexdigest()
    assert cli.main([*nowhere, "verify-export", str(wacz)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [f"sha256 {cited}", f"{wacz}: intact (2 files checked)"]
    assert cli.main([*nowhere, "verify-export", str(wacz), "--sha256", cited.upper()]) == 0
    assert capsys.readouterr().out.splitlines()[-2] == f"sha256 {cited} (the digest asked for)"

    copy = tmp_path / "copy.wacz"
    copy.write_bytes(wacz.read_bytes() + b"\0")  # a byte after the end record: read past
    mine = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert verify_wacz(copy).ok  # nothing in the zip differs
    assert cli.main([*nowhere, "verify-export", str(copy), "--sha256", f"sha256:{cited}"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        f"sha256 {mine}: NOT {cited}, the digest asked for: it is not that file, byte for byte"
    )
    assert out[-1] == (
        f"{copy}: NOT intact as a file: its SHA-256 is not the digest asked for (said above); "
        "the content is as signed (2 files checked)"
    )
    for given in (cited[:12], "garbage", cited + "0"):
        assert cli.main([*nowhere, "verify-export", str(copy), "--sha256", given]) == 2
        assert "is not a SHA-256 digest" in capsys.readouterr().err
