"""Did the capture land on a login form instead of the page? (expired or missing sessions)

A page behind a login that the browser is not logged in to does not fail: the site answers
with its login form, often after a redirect, with status 200. Stored as a good capture, it
would hide the problem until someone opens it years later. So after loading, a capture
looks for the signs, in this order:

1. ``login-redirect``: the page ended at another address whose path looks like a login
   page (``/login``, ``/signin``, ``/sso``, ``/oauth/authorize`` ...), by HTTP redirects or
   by script;
2. ``password-field``: the final page shows a visible password ``<input>``;
3. ``denied``: 401, or 403 where this profile had a 2xx from the same site before.

None of these applies when the address asked for is itself a login page (the user wants
the form). The outcome is a code: ``login_required`` without a profile (or 401 without
one), ``session_expired`` with a profile: the capture is kept as a *failed* snapshot with
its WARC and screenshot as evidence, never counted as a good capture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from archiver_app.library import Library

LOGIN_PATH = re.compile(
    r"/(?:log[-_]?in|log[-_]?on|sign[-_]?in|signon|sso|auth|authenticate|cas/login"
    r"|oauth2?/authori[sz]e|session/new|users?/sign_in|account/login|idp)(?:[/._;-]|$)",
    re.IGNORECASE,
)

#: Links a crawl in a profile never follows: visiting one would end the session it uses.
LOGOUT_IGNORE = r"(?i)/(?:log[-_]?out|log[-_]?off|sign[-_]?out|sign[-_]?off)(?:[/?.#;_-]|$)"

#: Visible password fields on the page (a hidden one in a header menu is not a login form).
SECRET_INPUT_JS = """() => Array.from(document.querySelectorAll('input[type=password]'))
  .some(e => !e.disabled && e.getClientRects().length > 0
        && getComputedStyle(e).visibility !== 'hidden')"""  # noqa: S105 (a script)


class LoginOutcome(StrEnum):
    """Why a capture is not the page asked for; the code control flow reads."""

    LOGIN_REQUIRED = "login_required"  # no profile: the site wants a login
    SESSION_EXPIRED = "session_expired"  # with a profile: its session no longer works


class LoginSignal(StrEnum):
    LOGIN_REDIRECT = "login-redirect"
    PASSWORD_FIELD = "password-field"  # noqa: S105 (a code, not a password)
    DENIED = "denied"


@dataclass(frozen=True)
class LoginCheck:
    outcome: LoginOutcome
    signal: LoginSignal
    evidence: str  # what was seen, for people
    profile: str | None

    @property
    def message(self) -> str:
        if self.outcome is LoginOutcome.SESSION_EXPIRED:
            return (
                f"session expired: profile {self.profile!r} is not logged in to this site "
                f"any more ({self.evidence}); log in again with "
                f"`archiver login {self.profile} URL`"
            )
        return (
            f"login required: {self.evidence}; log in with `archiver login NAME URL`, then "
            "capture with --profile NAME"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "signal": self.signal.value,
            "evidence": self.evidence,
            "profile": self.profile,
        }


def looks_like_login(url: str) -> bool:
    return bool(LOGIN_PATH.search(urlsplit(url).path or "/"))


@dataclass(frozen=True)
class PageSigns:
    """What the capture saw: the address asked for, the one it ended at, the main response's
    status, and whether a visible password field was on the page."""

    requested: str
    final: str
    status: int | None
    password_field: bool
    worked_before: bool = False  # this profile had a 2xx from this site before


def judge(signs: PageSigns, profile: str | None) -> LoginCheck | None:
    """The login outcome of a captured page, or None when it is the page asked for."""
    if looks_like_login(signs.requested):
        return None
    signal: LoginSignal | None = None
    evidence = ""
    if signs.final != signs.requested and looks_like_login(signs.final):
        signal, evidence = LoginSignal.LOGIN_REDIRECT, f"redirected to {signs.final}"
    elif signs.password_field:
        signal, evidence = LoginSignal.PASSWORD_FIELD, f"{signs.final} shows a password field"
    elif signs.status == 401 or (signs.status == 403 and profile and signs.worked_before):
        signal, evidence = LoginSignal.DENIED, f"{signs.final} answered {signs.status}"
    if signal is None:
        return None
    outcome = LoginOutcome.SESSION_EXPIRED if profile else LoginOutcome.LOGIN_REQUIRED
    return LoginCheck(outcome, signal, evidence, profile)


async def has_password_field(page: Any) -> bool:
    try:
        return bool(await page.evaluate(SECRET_INPUT_JS))
    except Exception:  # a PDF, a crashed tab: no form to see
        return False


def profile_worked_before(lib: Library, profile: str, domain: str) -> bool:
    """Whether a complete capture of ``domain`` with ``profile`` got a 2xx before."""
    from sqlalchemy import select

    from archiver_app.store.models import Snapshot, SnapshotState

    with lib.session() as s:
        found = s.scalar(
            select(Snapshot.id)
            .where(
                Snapshot.profile == profile,
                Snapshot.domain == domain,
                Snapshot.state == SnapshotState.COMPLETE,
                Snapshot.http_status >= 200,
                Snapshot.http_status < 300,
            )
            .limit(1)
        )
    return found is not None
