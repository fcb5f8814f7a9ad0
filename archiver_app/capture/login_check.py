"""Did the capture land on a login form instead of the page? (expired or missing sessions)

A page behind a login that the browser is not logged in to does not fail: the site answers
with its login form, often after a redirect, with status 200. Stored as a good capture, it
would hide the problem until someone opens it years later. So after loading, a capture
looks for the signs, in this order:

1. ``login-redirect``: the page ended at another address whose path looks like a login
   page (``/login``, ``/signin``, ``/sso``, ``/oauth/authorize`` ...), by HTTP redirects or
   by script;
2. ``password-field``: the final page is a login form: a visible password ``<input>`` in
   the page's main content (``<main>`` when it has one) that asks for a login (it is in a
   form, has a name or e-mail field beside it, or is marked ``current-password``: a lone
   field, such as a password-strength demo, is not), with little else there (at most
   :data:`WALL_TEXT` characters of text and :data:`WALL_LINKS` links outside the form). A
   login box in a sidebar, a navigation bar or a header (forums, news sites, WordPress
   widgets), or beside an article, is not a login wall;
3. ``denied``: 401, or 403 where this profile had a 2xx from the same site before.

None of these applies when the address asked for is itself a login page (the user wants
the form). The outcome is a code: ``login_required`` without a profile (or 401 without
one), ``session_expired`` with a profile: the capture is kept as a *failed* snapshot with
its WARC and screenshot as evidence, never counted as a good capture.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from archiver_app.library import Library
from archiver_app.store.connection_loss import lost_connection
from archiver_app.warc.surt import domain_of

LOGIN_PATH = re.compile(
    r"/(?:log[-_]?in|log[-_]?on|sign[-_]?in|signon|sso|auth|authenticate|cas/login"
    r"|oauth2?/authori[sz]e|session/new|users?/sign_in|account/login|idp)(?:[/._;-]|$)",
    re.IGNORECASE,
)

#: Links a crawl in a profile never follows: visiting one would end the session it uses.
LOGOUT_IGNORE = r"(?i)/(?:log[-_]?out|log[-_]?off|sign[-_]?out|sign[-_]?off)(?:[/?.#;_-]|$)"

#: A login wall has at most this much text, and these many links, outside its form(s).
WALL_TEXT = 1200
WALL_LINKS = 40

#: The visible password fields of the page's main content, and how much text and how many
#: links the main content has outside their forms: ``null`` when there is none (a hidden one
#: in a header menu, or a login box in a sidebar, is not a login form).
SECRET_INPUT_JS = """() => {
  const size = n => (n.innerText || '').replace(/\\s+/g, ' ').trim().length;
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const main = Array.from(document.querySelectorAll('main, [role=main]')).find(shown);
  const scope = main || document.body;
  if (!scope) return null;
  const aside = 'aside, nav, header, footer, [role=complementary], [role=navigation],'
    + ' [role=banner], [role=contentinfo], [id*=sidebar i], [class*=sidebar i]';
  // the password's form; or, for a form around the whole page (ASP.NET) or no form at all,
  // the largest block around the field with little text (a login box is small)
  const box = e => {
    const f = e.form;
    if (f && !f.contains(scope) && size(f) <= 2000) return f;
    let b = e;
    while (b.parentElement && b.parentElement !== scope && size(b.parentElement) <= 400)
      b = b.parentElement;
    return b;
  };
  // a login sends the secret: in a form, with a name field beside it, or marked as the
  // current password; a lone field (a password-strength demo) asks for no login
  const named = 'input[type=text], input[type=email], input[type=tel], input:not([type])';
  const asksLogin = (e, b) => !!e.form || e.autocomplete === 'current-password'
    || b.querySelector(named) !== null;
  const forms = new Set();
  for (const e of scope.querySelectorAll('input[type=password]')) {
    if (e.disabled || !shown(e)) continue;
    const side = e.closest(aside);
    if (side && side !== scope && scope.contains(side)) continue;
    const b = box(e);
    if (asksLogin(e, b)) forms.add(b);
  }
  if (forms.size === 0) return null;
  const inForm = n => Array.from(forms).some(f => f.contains(n));
  let formText = 0;
  for (const f of forms) if (scope.contains(f)) formText += size(f);
  const text = size(scope);
  const links = Array.from(scope.querySelectorAll('a[href]'))
    .filter(a => !inForm(a) && shown(a)).length;
  return {text: Math.max(0, text - formText), links: links};
}"""  # noqa: S105 (a script)


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
    status, whether a visible password field was in the page's main content, and how much
    text and how many links that content has outside the password form."""

    requested: str
    final: str
    status: int | None
    password_field: bool
    other_text: int = 0
    other_links: int = 0
    worked_before: bool = False  # this profile had a 2xx from this site before


def judge(signs: PageSigns, profile: str | None) -> LoginCheck | None:
    """The login outcome of a captured page, or None when it is the page asked for."""
    if looks_like_login(signs.requested):
        return None
    signal: LoginSignal | None = None
    evidence = ""
    if signs.final != signs.requested and looks_like_login(signs.final):
        signal, evidence = LoginSignal.LOGIN_REDIRECT, f"redirected to {signs.final}"
    elif signs.password_field and is_wall(signs):
        signal, evidence = LoginSignal.PASSWORD_FIELD, f"{signs.final} shows a password field"
    elif signs.status == 401 or (signs.status == 403 and profile and signs.worked_before):
        signal, evidence = LoginSignal.DENIED, f"{signs.final} answered {signs.status}"
    if signal is None:
        return None
    outcome = LoginOutcome.SESSION_EXPIRED if profile else LoginOutcome.LOGIN_REQUIRED
    return LoginCheck(outcome, signal, evidence, profile)


def is_wall(signs: PageSigns) -> bool:
    """Whether the password form is what the page is for: little else around it."""
    return signs.other_text <= WALL_TEXT and signs.other_links <= WALL_LINKS


async def password_form(page: Any) -> tuple[bool, int, int]:
    """(a password field in the main content, text and links outside its form), measured
    by :data:`SECRET_INPUT_JS`."""
    try:
        found = await page.evaluate(SECRET_INPUT_JS)
    except Exception:  # a PDF, a crashed tab: no form to see
        return False, 0, 0
    if not isinstance(found, dict):
        return False, 0, 0
    return True, int(found.get("text") or 0), int(found.get("links") or 0)


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


async def check_login(
    page: Any, lib: Library, url: str, *, final: str, status: int | None, profile: str | None
) -> LoginCheck | None:
    """Did the capture of ``url`` (the tab ``page``, at ``final``, whose main response had
    ``status``) end at a login form? A 403 asks ``lib`` whether ``profile`` worked there
    before; a database gone away leaves that out."""
    signs = PageSigns(url, final, status, *await password_form(page))
    if status == 403 and profile:
        try:
            worked = await asyncio.to_thread(profile_worked_before, lib, profile, domain_of(final))
        except Exception as exc:  # judged without the history the database holds
            if not lost_connection(exc):
                raise
        else:
            signs = replace(signs, worked_before=worked)
    return judge(signs, profile)
