"""Reading Netscape cookies.txt files: every kind of line, and bad lines by number."""

from __future__ import annotations

from pathlib import Path

import pytest

from archiver_app.errors import InputError
from archiver_app.profiles.cookies_txt import BadLine, Cookie, parse_cookies, read_cookies_file

NOW = 1_800_000_000


def test_cookies_comments_httponly_and_bad_lines() -> None:
    text = (
        "\ufeff# Netscape HTTP Cookie File\r\n"
        "# https://curl.se/docs/http-cookies.html\r\n"
        "\r\n"
        ".example.org\tTRUE\t/\tTRUE\t1900000000\tsession\tabc=def;g\r\n"
        "#HttpOnly_news.example.com\tFALSE\t/account\tFALSE\t0\tsid\t\r\n"
        "example.net\tFALSE\t/\tFALSE\t1700000000\told\tgone\n"
        "example.net\tTRUE\t/\tFALSE\t0\tnovalue\n"  # the empty value's tab dropped
        "example.net\tmaybe\t/\tFALSE\t0\tx\ty\n"
        "example.net\tTRUE\tnoslash\tFALSE\t0\tx\ty\n"
        "example.net\tTRUE\t/\tFALSE\tsoon\tx\ty\n"
        "example.net\tTRUE\t/\tFALSE\t0\t\ty\n"
        "a b\tTRUE\t/\tFALSE\t0\tx\ty\n"
        "just words\n"
    )
    parsed = parse_cookies(text, now=NOW)
    assert parsed.cookies == [
        Cookie(".example.org", "/", True, False, 1900000000, "session", "abc=def;g"),
        Cookie("news.example.com", "/account", False, True, 0, "sid", ""),
        Cookie(".example.net", "/", False, False, 0, "novalue", ""),
    ]
    assert parsed.expired == 1
    assert [b.number for b in parsed.bad_lines] == [8, 9, 10, 11, 12, 13]
    assert (
        str(parsed.bad_lines[0])
        == "line 8: the include-subdomains field is 'MAYBE', not TRUE or FALSE"
    )
    assert parsed.bad_lines[-1] == BadLine(13, "1 tab-separated fields where 7 are needed")


def test_playwright_shape() -> None:
    session = Cookie("example.org", "/", False, True, 0, "sid", "v").for_playwright()
    assert session["expires"] == -1 and session["httpOnly"] is True
    assert Cookie(".a.org", "/", True, False, 5, "n", "v").for_playwright()["expires"] == 5.0


def test_unreadable_files_are_refused_clearly(tmp_path: Path) -> None:
    binary = tmp_path / "cookies.sqlite"
    binary.write_bytes(b"SQLite format 3\x00\xff\xfe")
    with pytest.raises(InputError, match="not a text file"):
        read_cookies_file(binary, now=NOW)
    with pytest.raises(InputError, match="cannot read"):
        read_cookies_file(tmp_path / "missing.txt", now=NOW)
