"""Addresses shown to a person are in their readable form (archiver_app.urls.display_url);
the stored form is what it was, and the form shown, typed again, is the same address."""

from __future__ import annotations

import pytest

from archiver_app.urls import display_host, display_text, display_url, normalize_url


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        (
            "http://127.0.0.1:8000/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html",
            "http://127.0.0.1:8000/мир/東京.html",
        ),
        ("https://xn--bcher-kva.example/caf%C3%A9?q=%C3%BC", "https://bücher.example/café?q=ü"),
        ("https://xn--bcher-kva.example:8443/", "https://bücher.example:8443/"),
        # escaped ASCII stays escaped: shown as '/', '?', '#' or ' ' it would be another address
        (
            "http://h/a%2Fb%3Fc%23d%25e%20f?x=%26&y=%C3%A9",
            "http://h/a%2Fb%3Fc%23d%25e%20f?x=%26&y=é",
        ),
        # bytes that are not UTF-8, and characters that mislead, stay escaped
        ("http://h/%FF%C3%A9", "http://h/%FFé"),
        ("http://h/a%E2%80%AEfdp.exe", "http://h/a%E2%80%AEfdp.exe"),  # right-to-left override
        ("http://h/a%E2%80%8Bb%C2%A0c", "http://h/a%E2%80%8Bb%C2%A0c"),  # zero-width, no-break
        ("http://h/a%E2%88%95b", "http://h/a%E2%88%95b"),  # a division slash looks like '/'
        ("http://h/%ED%A0%80", "http://h/%ED%A0%80"),  # a surrogate is no character
        ("http://h/plain?q=1#/route", "http://h/plain?q=1#/route"),
        ("http://h/a?", "http://h/a?"),  # nothing dropped, not even an empty query
    ],
)
def test_addresses_are_shown_readable_and_stay_the_same_address(stored: str, shown: str) -> None:
    assert display_url(stored) == shown
    assert normalize_url(shown) == normalize_url(stored)


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("xn--80adxhks.xn--p1ai", "москва.рф"),  # one script, Cyrillic: shown
        ("xn--pple-43d.com", "xn--pple-43d.com"),  # 'аpple', its 'а' Cyrillic: not shown
        ("xn--ml-d9b.example", "xn--ml-d9b.example"),  # Latin and Greek in one label
        ("xn--abc-ti4b8gof5e173y.jp", "abcドメイン例.jp"),  # Japanese with Latin: allowed
        ("xn--abc-ot8lk11n.kr", "abc한국.kr"),  # Korean with Latin: allowed
        ("xn--pple-43d.xn--bcher-kva.example", "xn--pple-43d.xn--bcher-kva.example"),
        ("example.com", "example.com"),  # all ASCII: as it is
        ("аpple.com", "xn--pple-43d.com"),  # stored in Unicode before normalising: the same
    ],
)
def test_a_host_mixing_scripts_that_could_pass_for_another_stays_in_idna(
    host: str, shown: str
) -> None:
    assert display_host(host) == shown
    assert display_url(f"https://{host}/%D0%BC") == f"https://{shown}/м"


def test_addresses_in_text_are_shown_readable_and_punctuation_stays_out() -> None:
    text = (
        "failed http://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80: timeout "
        "(see https://xn--pple-43d.com)."
    )
    assert display_text(text) == (
        "failed http://bücher.example/мир: timeout (see https://xn--pple-43d.com)."
    )
    assert display_text("no address here") == "no address here"
