"""Crawl rules: accept / ignore regexes, built-in ignore sets, per-page browser behaviour.

Rules are versioned per job (table ``rulesets``); the newest version decides every dequeue,
so an ignore pattern added while a job runs takes effect at the next claim. Every regex is
checked when it is given: an invalid one is refused with the position of the error.

Patterns are Python regexes searched (``re.search``) against the whole normalised URL,
as ArchiveBot's ignores are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

from archiver_app.errors import InputError

#: Built-in ignore sets for common crawler traps, on by default (``ignore_sets``).
BUILTIN_IGNORE_SETS: dict[str, tuple[str, ...]] = {
    # Calendars: endless next-month / next-day links.
    "calendars": (
        r"(?i)[?&;](?:year|month|day|date|week|cal(?:endar)?_?date)=[^&]*\d",
        r"(?i)/(?:calendar|cal|events?)/(?:\d{4}[/-]\d{1,2}|\d{1,2}[/-]\d{4})",
    ),
    # Session ids in the query or the path make every visit a new URL.
    "session-ids": (
        r"(?i)[;?&](?:jsessionid|phpsessid|aspsessionid\w*|sessionid|session_id|sid|sess)=",
    ),
    # Infinite pagination and sorting permutations.
    "pagination": (
        r"(?i)[?&](?:page|p|pg|offset|start)=\d{3,}",
        r"(?i)[?&](?:sort|order|orderby|sortby|dir)=[^&]*&(?:[^&]*&)*(?:sort|order|orderby|"
        r"sortby|dir)=",
    ),
    # The same path segment three times: relative-link loops such as /a/b/a/b/a/.
    "repeated-segments": (
        r"^[a-z]+://[^/]+(?:/[^/?#]*)*?/([^/?#]+)/(?:[^?#]*/)?\1/(?:[^?#]*/)?\1(?:[/?#]|$)",
    ),
}
DEFAULT_IGNORE_SETS: tuple[str, ...] = tuple(BUILTIN_IGNORE_SETS)

MAX_CONCURRENCY = 16


def compile_pattern(pattern: str, *, what: str = "pattern", flags: int = 0) -> re.Pattern[str]:
    """Compile ``pattern`` (with ``flags``) or raise :class:`InputError` naming the position
    of the error.

    The message reads ``invalid ignore pattern 'a(b' at position 1: missing ), unterminated
    subpattern``; ``details`` repeats the pattern with a caret under the position. URL rules
    are compiled without flags (a URL is one line); the text comparison's ignore patterns
    with ``re.MULTILINE`` (:func:`archiver_app.compare.text.compile_ignore_patterns`).
    """
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        pos = exc.pos if exc.pos is not None else 0
        raise InputError(
            f"invalid {what} {pattern!r} at position {pos}: {exc.msg}",
            details=f"{pattern}\n{' ' * pos}^",
        ) from exc


@dataclass(frozen=True)
class Rules:
    """One version of a job's rules (stored as JSON in ``rulesets.rules``)."""

    accept: tuple[str, ...] = ()  # extra URLs in scope (the whole scope for "custom")
    ignore: tuple[str, ...] = ()  # URLs never captured
    ignore_sets: tuple[str, ...] = DEFAULT_IGNORE_SETS
    user_agent: str | None = None
    custom_js: str | None = None  # run after load
    autoscroll: bool = True
    login_check: bool = True  # a page that is a login form fails (capture.login_check)
    page_timeout: float = 60.0
    settle_seconds: float = 1.0
    delay_min: float = 0.0  # politeness delay between two pages of one host
    delay_max: float = 0.0
    concurrency: int = 2  # pages at once in one browser
    attempts: int = 3  # attempts per page

    def __post_init__(self) -> None:
        for p in self.accept:
            compile_pattern(p, what="accept pattern")
        for p in self.ignore:
            compile_pattern(p, what="ignore pattern")
        unknown = sorted(set(self.ignore_sets) - set(BUILTIN_IGNORE_SETS))
        if unknown:
            raise InputError(
                f"unknown ignore set {unknown[0]!r}; known: {', '.join(BUILTIN_IGNORE_SETS)}"
            )
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise InputError(f"concurrency must be between 1 and {MAX_CONCURRENCY}")
        if self.delay_min < 0 or self.delay_max < self.delay_min:
            raise InputError("politeness delay: need 0 <= min <= max")
        if self.page_timeout <= 0:
            raise InputError("page timeout must be positive")
        if not 1 <= self.attempts <= 20:
            raise InputError("attempts per page must be between 1 and 20")

    # -------------------------------------------------------------- (de)serialising

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("accept", "ignore", "ignore_sets"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rules:
        known = set(cls.__dataclass_fields__)
        kwargs = {k: v for k, v in data.items() if k in known}
        for key in ("accept", "ignore", "ignore_sets"):
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)

    def changed(self, **changes: Any) -> Rules:
        """A copy with ``changes`` applied (validated like a new one)."""
        for key in ("accept", "ignore", "ignore_sets"):
            if key in changes:
                changes[key] = tuple(changes[key])
        return replace(self, **changes)

    # -------------------------------------------------------------- matching

    @cached_property
    def matcher(self) -> RuleMatcher:
        return RuleMatcher(self)


@dataclass(frozen=True)
class RuleMatcher:
    """Compiled form of :class:`Rules` (cached on the rules object)."""

    rules: Rules
    _accept: tuple[re.Pattern[str], ...] = field(init=False)
    _ignore: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False)

    def __post_init__(self) -> None:
        accept = tuple(re.compile(p) for p in self.rules.accept)
        ignore = [(f"ignore {p!r}", re.compile(p)) for p in self.rules.ignore]
        for name in self.rules.ignore_sets:
            ignore += [
                (f"ignore set {name} {p!r}", re.compile(p)) for p in BUILTIN_IGNORE_SETS[name]
            ]
        object.__setattr__(self, "_accept", accept)
        object.__setattr__(self, "_ignore", tuple(ignore))

    def accepted(self, url: str) -> bool:
        return any(p.search(url) for p in self._accept)

    def ignored_by(self, url: str) -> str | None:
        """The rule that ignores ``url`` (as a readable reason), or None."""
        for reason, pattern in self._ignore:
            if pattern.search(url):
                return reason
        return None


def validate_patterns(patterns: Iterable[str], *, what: str) -> list[str]:
    """Check every pattern; return them as a list (first error raised with its position)."""
    out = []
    for p in patterns:
        compile_pattern(p, what=what)
        out.append(p)
    return out


def merge_ignores(
    current: Sequence[str], add: Sequence[str], remove: Sequence[str]
) -> tuple[str, ...]:
    """``current`` plus ``add`` (no duplicates, order kept) minus ``remove``."""
    validate_patterns(add, what="ignore pattern")
    out = [p for p in current if p not in set(remove)]
    out += [p for p in add if p not in out]
    return tuple(out)
