"""Which request-body fields are secrets, and bodies with their values blanked."""

from __future__ import annotations

from archiver_app.warc.form_secrets import blank_secrets, is_secret_name

FORM = "application/x-www-form-urlencoded"


def test_secret_names_are_words_of_the_name() -> None:
    for name in ("password", "user[password]", "j_password", "newPassword2", "pwd", "PIN",
                 "otp_code", "passwd", "csrf_token", "login-pass", "pw"):  # fmt: skip
        assert is_secret_name(name), name
    for name in ("user", "shipping", "spinner", "opinion", "typing", "compass", "next"):
        assert not is_secret_name(name), name


def test_urlencoded_multipart_and_json_bodies() -> None:
    body = b"user=ann&password=hunter2&next=%2Fhome&user%5Bpwd%5D=x+y&pin="
    assert blank_secrets(FORM, body) == b"user=ann&password=&next=%2Fhome&user%5Bpwd%5D=&pin="
    assert blank_secrets(FORM + "; charset=UTF-8", b"q=tides&page=2") is None

    multi = (
        b'--XY\r\nContent-Disposition: form-data; name="user"\r\n\r\nann\r\n'
        b'--XY\r\nContent-Disposition: form-data; name="passwd"\r\n\r\nhunter2\r\n'
        b'--XY\r\nContent-Disposition: form-data; name="pw"; filename="pw.txt"\r\n\r\nfile\r\n'
        b"--XY--\r\n"
    )
    blanked = blank_secrets('multipart/form-data; boundary="XY"', multi)
    assert blanked == multi.replace(b"hunter2", b"")  # a file upload is not a field value

    doc = b'{"user": "ann", "auth": {"password": "hunter2", "otp": 123456}, "spinner": 1}'
    assert blank_secrets("application/json", doc) == (
        b'{"user":"ann","auth":{"password":"","otp":""},"spinner":1}'
    )
    assert blank_secrets("application/json", b'{"password": ') is None  # not JSON: as is
    assert blank_secrets("text/html", b"password=hunter2") is None


def test_fields_the_page_showed_as_password_inputs() -> None:
    body = b"email=a%40b.c&field_7=hunter2"
    assert blank_secrets(FORM, body) is None
    assert blank_secrets(FORM, body, also={"field_7"}) == b"email=a%40b.c&field_7="
