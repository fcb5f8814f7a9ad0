"""Read a Netscape ``cookies.txt`` file (what browser extensions and ``curl -c`` write).

One cookie a line, seven fields separated by tabs::

    domain  include-subdomains  path  secure  expires  name  value

``include-subdomains`` and ``secure`` are ``TRUE`` or ``FALSE``; ``expires`` is Unix seconds,
0 for a session cookie. A line starting ``#HttpOnly_`` is a cookie marked HttpOnly (the
prefix is not part of the domain); any other line starting ``#`` is a comment; blank lines
are skipped. A line that is none of these is reported with its number and the rest are
still read: parsing never stops at a bad line and never guesses.

The result is a list of cookies in the shape of Playwright's ``BrowserContext.add_cookies``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archiver_app.errors import InputError

HTTPONLY_PREFIX = "#HttpOnly_"
MAX_FILE_BYTES = 16 << 20
_BOOLEANS = {"TRUE": True, "FALSE": False}


@dataclass(frozen=True)
class Cookie:
    domain: str  # with a leading dot when it applies to subdomains too
    path: str
    secure: bool
    http_only: bool
    expires: int  # Unix seconds; 0: ends with the browser session
    name: str
    value: str

    def for_playwright(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "domain": self.domain,
            "path": self.path,
            "expires": float(self.expires) if self.expires > 0 else -1,
            "httpOnly": self.http_only,
            "secure": self.secure,
        }


@dataclass(frozen=True)
class BadLine:
    number: int  # 1-based
    problem: str

    def __str__(self) -> str:
        return f"line {self.number}: {self.problem}"


@dataclass
class CookieFile:
    cookies: list[Cookie] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    expired: int = 0  # cookies already past their expiry time, left out


def parse_line(line: str, number: int) -> Cookie | BadLine | None:
    """One line of the file: a cookie, a problem, or None for a comment or a blank line."""
    http_only = line.startswith(HTTPONLY_PREFIX)
    if http_only:
        line = line[len(HTTPONLY_PREFIX) :]
    elif line.startswith("#") or not line.strip():
        return None
    fields = line.split("\t")
    if len(fields) == 6:  # some exporters drop the tab before an empty value
        fields.append("")
    if len(fields) < 7:
        return BadLine(number, f"{len(fields)} tab-separated fields where 7 are needed")
    domain, subdomains, path, secure, expires, name = (f.strip() for f in fields[:6])
    value = "\t".join(fields[6:])  # a value is the rest of the line, as written
    flags = {"include-subdomains": subdomains.upper(), "secure": secure.upper()}
    for label, flag in flags.items():
        if flag not in _BOOLEANS:
            return BadLine(number, f"the {label} field is {flag!r}, not TRUE or FALSE")
    if not domain or any(c in domain for c in " /:;,"):
        return BadLine(number, f"{domain!r} is not a domain")
    if not path.startswith("/"):
        return BadLine(number, f"the path {path!r} does not start with /")
    if not name:
        return BadLine(number, "the cookie has no name")
    try:
        when = int(float(expires))
    except ValueError:
        return BadLine(number, f"the expiry {expires!r} is not a number of seconds")
    if when < 0:
        return BadLine(number, f"the expiry {expires!r} is negative")
    bare = domain.lstrip(".")
    domain = f".{bare}" if _BOOLEANS[flags["include-subdomains"]] else bare
    return Cookie(domain, path, _BOOLEANS[flags["secure"]], http_only, when, name, value)


def parse_cookies(text: str, *, now: float) -> CookieFile:
    """Every cookie of ``text``, the bad lines, and how many had expired before ``now``."""
    out = CookieFile()
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        parsed = parse_line(raw.rstrip("\r\n"), number)
        if isinstance(parsed, BadLine):
            out.bad_lines.append(parsed)
        elif parsed is not None:
            if 0 < parsed.expires < now:
                out.expired += 1
            else:
                out.cookies.append(parsed)
    return out


def read_cookies_file(path: Path, *, now: float) -> CookieFile:
    """:func:`parse_cookies` of the file at ``path``.

    Raises:
        InputError: the file cannot be read, is too large, or is not text.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path} is {size} bytes; a cookies.txt file is far smaller")
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not a text file (not UTF-8 at byte {exc.start})") from exc
    return parse_cookies(text, now=now)
