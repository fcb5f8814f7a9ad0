"""Files chosen while browsing are put back into the empty parts that name them."""

from __future__ import annotations

import base64
import json

from archiver_app.capture.browse.uploads import ChosenFiles, parse_chosen_files

HEADERS = [("Content-Type", "multipart/form-data; boundary=XyZ")]


def _note(*files: tuple[str, bytes]) -> str:
    return json.dumps(
        {
            "kind": "files",
            "files": [{"name": n, "data": base64.b64encode(d).decode()} for n, d in files],
        }
    )


def _body(*parts: tuple[bytes, bytes]) -> bytes:
    out = b"".join(b"--XyZ\r\n" + head + b"\r\n\r\n" + value + b"\r\n" for head, value in parts)
    return out + b"--XyZ--\r\n"


def test_an_empty_file_part_gets_the_chosen_file_and_nothing_else_changes() -> None:
    chosen = ChosenFiles()
    chosen.take(_note(('my "cv".pdf', b"\x00PDF\r\n--bytes"), ("other.txt", b"other")))
    note = (b'Content-Disposition: form-data; name="note"', b"")
    sent = (
        b'Content-Disposition: form-data; name="cv"; filename="my %22cv%22.pdf"\r\n'
        b"Content-Type: application/pdf",
        b"",
    )
    unknown = (b'Content-Disposition: form-data; name="x"; filename="gone.bin"', b"")
    whole = (b'Content-Disposition: form-data; name="y"; filename="other.txt"', b"kept")
    body = _body(note, sent, unknown, whole)
    filled = chosen.fill(HEADERS, body)
    assert filled == _body(note, (sent[0], b"\x00PDF\r\n--bytes"), unknown, whole)
    assert chosen.fill([("Content-Type", "text/plain")], body) == body
    assert ChosenFiles().fill(HEADERS, body) == body


def test_only_a_files_note_of_the_right_shape_is_taken() -> None:
    assert parse_chosen_files(_note(("a.bin", b"\x01\x02"))) == [("a.bin", b"\x01\x02")]
    assert parse_chosen_files('{"kind": "leave", "url": "x", "dom": ""}') == []
    assert parse_chosen_files('{"kind": "files", "files": [{"name": "a", "data": "@@"}]}') == []
    assert parse_chosen_files("not json") == []
