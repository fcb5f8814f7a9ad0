"""Rules (regex validation, built-in ignore sets) and scopes (page/prefix/host/domain/custom)."""

from __future__ import annotations

import pytest

from archiver_app.crawl.rules import Rules, compile_pattern, merge_ignores
from archiver_app.crawl.scope import Scope, ScopeChecker, validate_seeds
from archiver_app.errors import InputError
from archiver_app.urls import normalize_url


@pytest.mark.parametrize(
    ("pattern", "position"),
    [("abc(def", 3), ("a[b", 1), ("x{2,1}", 2), ("(?P<n>a)(?P<n>b)", 12), ("*a", 0)],
)
def test_invalid_regex_is_rejected_with_its_position(pattern: str, position: int) -> None:
    with pytest.raises(InputError) as info:
        compile_pattern(pattern, what="ignore pattern")
    assert f"at position {position}:" in str(info.value)
    assert repr(pattern) in str(info.value)
    assert info.value.details is not None
    assert info.value.details.splitlines()[1] == " " * position + "^"


def test_rules_validate_every_pattern_and_value() -> None:
    with pytest.raises(InputError, match=r"invalid ignore pattern 'ok\|bad\(' at position 6"):
        Rules(ignore=("fine", "ok|bad("))
    with pytest.raises(InputError, match="accept pattern"):
        Rules(accept=("[",))
    with pytest.raises(InputError, match="unknown ignore set 'nope'"):
        Rules(ignore_sets=("nope",))
    with pytest.raises(InputError, match="concurrency"):
        Rules(concurrency=0)
    with pytest.raises(InputError, match="delay"):
        Rules(delay_min=2, delay_max=1)
    assert Rules.from_json(Rules(ignore=("a",), concurrency=3).to_json()) == Rules(
        ignore=("a",), concurrency=3
    )


def test_merge_ignores_adds_removes_and_validates() -> None:
    assert merge_ignores(("a", "b"), ["c", "a"], ["b"]) == ("a", "c")
    with pytest.raises(InputError, match="position 0"):
        merge_ignores((), ["+x"], [])


@pytest.mark.parametrize(
    ("url", "rule_set"),
    [
        ("http://h/events?month=2026-11", "calendars"),
        ("http://h/calendar/2026/11", "calendars"),
        ("http://h/a;jsessionid=ABCDEF123", "session-ids"),
        ("http://h/list?PHPSESSID=1234", "session-ids"),
        ("http://h/list?page=1000", "pagination"),
        ("http://h/x?sort=a&dir=up&sort=b", "pagination"),
        ("http://h/a/b/a/c/a/d", "repeated-segments"),
        ("http://h/a/a/a", "repeated-segments"),
    ],
)
def test_builtin_ignore_sets_catch_traps(url: str, rule_set: str) -> None:
    reason = Rules().matcher.ignored_by(url)
    assert reason is not None and reason.startswith(f"ignore set {rule_set} ")
    assert Rules(ignore_sets=()).matcher.ignored_by(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://h/",
        "http://h/list?page=12",
        "http://h/a/b/c/d",
        "http://h/blog/2026/11/post",
        "http://h/a/b/a",
        "http://h/search?q=sid",
    ],
)
def test_builtin_ignore_sets_leave_ordinary_urls_alone(url: str) -> None:
    assert Rules().matcher.ignored_by(url) is None


def test_normalize_url() -> None:
    assert normalize_url("HTTP://Example.COM:80") == "http://example.com/"
    assert normalize_url("https://x.org:443/a?b=1#frag") == "https://x.org/a?b=1"
    assert normalize_url("http://x.org:8080/a") == "http://x.org:8080/a"
    assert normalize_url("mailto:someone@x.org") is None
    assert normalize_url("javascript:void(0)") is None
    assert normalize_url("http://[::1]:99/") == "http://[::1]:99/"
    assert normalize_url("http://x:notaport/") is None


def test_normalize_url_gives_the_address_the_browser_sends() -> None:
    """A typed address in another script is stored as its WARC records carry it (what the
    browser sends): an IDNA host, other characters as UTF-8 escapes, escapes kept."""
    assert normalize_url("http://127.0.0.1:8765/café?q=ü") == (
        "http://127.0.0.1:8765/caf%C3%A9?q=%C3%BC"
    )
    assert normalize_url("https://Bücher.example/straße") == (
        "https://xn--bcher-kva.example/stra%C3%9Fe"
    )
    assert normalize_url("http://x.org/a b?q=1%20&s=a|b") == "http://x.org/a%20b?q=1%20&s=a|b"
    assert normalize_url('http://x.org/"<>#/ré') == "http://x.org/%22%3C%3E#/r%C3%A9"


def test_scopes() -> None:
    seed = "http://www.ex.org:8000/docs/intro.html"
    urls = {
        "same": "http://www.ex.org:8000/docs/intro.html",
        "prefix": "http://www.ex.org:8000/docs/deep/page",
        "host": "http://www.ex.org:8000/blog/",
        "other_port": "http://www.ex.org:9000/docs/x",
        "sub": "http://cdn.ex.org/docs/x",
        "other": "http://other.org/docs/",
    }
    expected = {
        Scope.PAGE: {"same"},
        Scope.PREFIX: {"same", "prefix"},
        Scope.HOST: {"same", "prefix", "host"},
        Scope.DOMAIN: {"same", "prefix", "host", "other_port", "sub"},
    }
    for scope, inside in expected.items():
        checker = ScopeChecker([seed], scope, Rules())
        got = {k for k, u in urls.items() if checker.check(u).accepted}
        assert got == inside, scope
        reason = checker.check(urls["other"]).reason
        assert reason == f"scope: outside {scope.value} scope"


def test_accept_widens_scope_and_ignore_wins() -> None:
    rules = Rules(accept=(r"^http://cdn\.ex\.org/",), ignore=(r"/private/",))
    checker = ScopeChecker(["http://ex.org/"], Scope.HOST, rules)
    assert checker.check("http://cdn.ex.org/a").accepted
    assert checker.check("http://ex.org/private/x").reason == "ignore '/private/'"
    assert not checker.check("http://elsewhere.org/").accepted


def test_custom_scope_is_only_the_accept_patterns() -> None:
    rules = Rules(accept=(r"/wiki/",))
    checker = ScopeChecker(["http://ex.org/wiki/Start"], Scope.CUSTOM, rules)
    assert checker.check("http://other.org/wiki/X").accepted
    assert checker.check("http://ex.org/blog").reason == "scope: matches no accept pattern"


def test_seeds_outside_their_own_scope_are_refused() -> None:
    with pytest.raises(InputError, match="outside the scope it defines: it matches no --include"):
        validate_seeds(["http://ex.org/blog"], Scope.CUSTOM, Rules(accept=("/wiki/",)))
    with pytest.raises(InputError, match="outside the scope it defines: ignore '/blog'"):
        validate_seeds(["http://ex.org/blog"], Scope.HOST, Rules(ignore=("/blog",)))
    with pytest.raises(InputError, match="needs at least one --include"):
        validate_seeds(["http://ex.org/"], Scope.CUSTOM, Rules())
    with pytest.raises(InputError, match="scheme"):
        validate_seeds(["ftp://ex.org/"], Scope.HOST, Rules())
    with pytest.raises(InputError, match="at least one seed"):
        validate_seeds([], Scope.HOST, Rules())
    assert validate_seeds(["http://EX.org", "http://ex.org/"], Scope.HOST, Rules()) == [
        "http://ex.org/"
    ]
