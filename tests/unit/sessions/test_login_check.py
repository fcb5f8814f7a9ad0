"""Which captured pages are login forms, and which code each gets."""

from __future__ import annotations

from archiver_app.capture.login_check import (
    LoginOutcome,
    LoginSignal,
    PageSigns,
    judge,
    looks_like_login,
)

SITE = "https://journal.example.org"


def test_login_paths() -> None:
    for path in ("/login", "/users/sign_in", "/account/login?next=/x", "/sso/start", "/signin",
                 "/oauth2/authorize?client=1", "/log-in.php", "/cas/login"):  # fmt: skip
        assert looks_like_login(SITE + path), path
    for path in ("/author/smith", "/blog/logging-in-practice", "/", "/signing-ceremony",
                 "/authority"):  # fmt: skip
        assert not looks_like_login(SITE + path), path


def test_signals_and_outcomes() -> None:
    article = f"{SITE}/article/7"
    redirect = PageSigns(article, f"{SITE}/login?next=/article/7", 200, True)
    check = judge(redirect, None)
    assert check is not None
    assert (check.outcome, check.signal) == (
        LoginOutcome.LOGIN_REQUIRED,
        LoginSignal.LOGIN_REDIRECT,
    )
    assert check.message.startswith("login required: redirected to")
    expired = judge(redirect, "university")
    assert expired is not None and expired.outcome is LoginOutcome.SESSION_EXPIRED
    assert "archiver login university URL" in expired.message

    paywall = judge(PageSigns(article, article, 200, True), None)
    assert paywall is not None and paywall.signal is LoginSignal.PASSWORD_FIELD
    assert judge(PageSigns(article, article, 200, False), "university") is None

    assert judge(PageSigns(article, article, 401, False), None) is not None
    forbidden = PageSigns(article, article, 403, False)
    assert judge(forbidden, None) is None  # a plain 403 is just a 403
    assert judge(forbidden, "university") is None  # the profile never worked here
    denied = judge(PageSigns(article, article, 403, False, worked_before=True), "university")
    assert denied is not None and denied.signal is LoginSignal.DENIED

    # a password field with much else around it is a login box, not a login wall
    assert judge(PageSigns(article, article, 200, True, other_text=5000), None) is None
    assert judge(PageSigns(article, article, 200, True, other_links=120), None) is None
    wall = judge(PageSigns(article, article, 200, True, other_text=300, other_links=6), None)
    assert wall is not None and wall.signal is LoginSignal.PASSWORD_FIELD

    # asking for the login page itself is what the user wants
    login = f"{SITE}/login"
    assert judge(PageSigns(login, login, 200, True), None) is None
