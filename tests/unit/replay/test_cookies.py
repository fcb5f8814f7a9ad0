"""The replay's cookie jar answers document.cookie as a browser would, per site."""

from __future__ import annotations

from datetime import UTC, datetime

from archiver_app.replay.cookies import CookieJar
from archiver_app.replay.response import ReplayResponse


def test_host_domain_and_path_decide_who_reads_a_cookie() -> None:
    jar = CookieJar()
    jar.set_from_script("https://www.a.example/shop/cart", "cart=3")  # path /shop
    jar.set_from_script("https://www.a.example/", "site=1; domain=a.example; path=/")
    jar.set_from_script("https://www.a.example/", "evil=1; domain=b.example")  # refused
    jar.set_from_script("https://www.a.example/", "tld=1; domain=example")  # refused
    assert jar.for_script("https://www.a.example/shop/item") == "cart=3; site=1"
    assert jar.for_script("https://www.a.example/shopping") == "site=1"
    assert jar.for_script("https://news.a.example/") == "site=1"
    assert jar.for_script("https://b.example/") == ""
    assert jar.for_script("https://example/") == ""


def test_writes_replace_delete_and_respect_secure_and_httponly() -> None:
    jar = CookieJar()
    jar.set_from_script("https://a.example/", "a=1")
    jar.set_from_script("https://a.example/", "b=2")
    jar.set_from_script("https://a.example/", "a=3")  # keeps its place
    assert jar.for_script("https://a.example/") == "a=3; b=2"
    jar.set_from_script("https://a.example/", "a=; max-age=0")
    jar.set_from_script("https://a.example/", "b=; expires=Thu, 01 Jan 1970 00:00:00 GMT")
    assert jar.for_script("https://a.example/") == ""
    jar.set_from_script("https://a.example/", "s=1; Secure")
    jar.set_from_script("http://a.example/", "t=1; Secure")  # not from http
    assert jar.for_script("http://a.example/") == ""
    jar.set_from_header("https://a.example/", "h=1; HttpOnly")
    jar.set_from_script("https://a.example/", "h=2")  # no script replaces an HttpOnly one
    jar.set_from_script("https://a.example/", "x=1; HttpOnly")  # nor sets one
    assert jar.for_script("https://a.example/") == "s=1"


def test_archived_headers_count_from_the_capture_time() -> None:
    """An Expires after the capture but long past now still sets the cookie: the page
    expects what the site answered then."""
    response = ReplayResponse(
        200,
        [
            ("X-Archive-Orig-Set-Cookie", "id=7; Path=/; Expires=Wed, 01 Jan 2014 00:00:00 GMT"),
            ("X-Archive-Orig-Set-Cookie", "old=1; Expires=Sun, 01 Jan 2012 00:00:00 GMT"),
        ],
        b"",
        "https://a.example/",
        "20130601000000000",
        1,
    )
    jar = CookieJar()
    jar.set_from_response("https://a.example/", response)
    assert jar.for_script("https://a.example/") == "id=7"
    jar.set_from_header("https://a.example/", "id=; Expires=Sun, 01 Jan 2012 00:00:00 GMT",
                        datetime(2013, 6, 2, tzinfo=UTC))  # fmt: skip
    assert jar.for_script("https://a.example/") == ""
