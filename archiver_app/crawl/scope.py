"""Crawl scope: which discovered URLs belong to a job, and why the others do not.

A job's scope is defined by its seeds:

* ``page``: the seeds themselves and nothing else (their images, styles and scripts are part
  of the page capture, not separate pages);
* ``prefix``: URLs that start with a seed up to the last ``/`` of its path;
* ``host``: URLs on a seed's host and port;
* ``domain``: a seed's host without ``www.`` and every sub-domain of it;
* ``custom``: only URLs matching one of the rules' ``accept`` regexes.

For the first four, ``accept`` regexes widen the scope. Ignore patterns (and the built-in
ignore sets) always win. Every refusal has a reason, recorded on the page and counted in the
coverage report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from archiver_app.crawl.rules import Rules
from archiver_app.errors import InputError
from archiver_app.urls import normalize_url
from archiver_app.validation import validate_capture_url


class Scope(StrEnum):
    PAGE = "page"
    PREFIX = "prefix"
    HOST = "host"
    DOMAIN = "domain"
    CUSTOM = "custom"


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc.rsplit("@", 1)[-1]


def _hostname(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _prefix(url: str) -> str:
    """``host[:port]/path/up/to/last/slash/`` (scheme-less, so http and https agree)."""
    parts = urlsplit(url)
    path = parts.path[: parts.path.rfind("/") + 1] or "/"
    return f"{_host_port(url)}{path}"


@dataclass(frozen=True)
class Verdict:
    """Whether a URL is in a job; ``reason`` says why not (``scope: ...``, ``ignore ...``)."""

    accepted: bool
    reason: str | None = None


class ScopeChecker:
    """Decides whether a URL belongs to a job with these ``seeds``, ``scope`` and ``rules``."""

    def __init__(self, seeds: Sequence[str], scope: Scope | str, rules: Rules) -> None:
        self.scope = Scope(scope)
        self.rules = rules
        self.seeds = [s for s in (normalize_url(x) for x in seeds) if s]
        self._seed_set = frozenset(self.seeds)
        self._prefixes = tuple(_prefix(s) for s in self.seeds)
        self._hosts = frozenset(_host_port(s) for s in self.seeds)
        self._domains = tuple(
            h[4:] if h.startswith("www.") else h for h in {_hostname(s) for s in self.seeds}
        )

    def in_scope(self, url: str) -> bool:
        """Scope (plus accept regexes) alone, before ignore patterns."""
        if url in self._seed_set:
            return True
        if self.scope is Scope.PREFIX:
            tail = url.split("://", 1)[-1]
            if tail.startswith(self._prefixes):
                return True
        elif self.scope is Scope.HOST:
            if _host_port(url) in self._hosts:
                return True
        elif self.scope is Scope.DOMAIN:
            host = _hostname(url)
            if any(host == d or host.endswith("." + d) for d in self._domains):
                return True
        return self.rules.matcher.accepted(url)

    def check(self, url: str) -> Verdict:
        """The verdict for a normalised URL."""
        if self.scope is Scope.CUSTOM and url not in self._seed_set:
            if not self.rules.matcher.accepted(url):
                return Verdict(False, "scope: matches no accept pattern")
        elif not self.in_scope(url):
            return Verdict(False, f"scope: outside {self.scope.value} scope")
        ignored = self.rules.matcher.ignored_by(url)
        if ignored:
            return Verdict(False, ignored)
        return Verdict(True)


def validate_seeds(seeds: Sequence[str], scope: Scope | str, rules: Rules) -> list[str]:
    """Check and normalise the seeds of a new job.

    Raises:
        InputError: a seed is malformed, or lies outside the scope it defines (a ``custom``
            scope whose accept patterns do not match it, or an ignore pattern that excludes it).
    """
    if not seeds:
        raise InputError("a crawl needs at least one seed URL")
    scope = Scope(scope)
    if scope is Scope.CUSTOM and not rules.accept:
        raise InputError("scope 'custom' needs at least one --include pattern")
    out: list[str] = []
    for raw in seeds:
        normal = normalize_url(validate_capture_url(raw))
        if normal is None:
            raise InputError(f"malformed URL {raw!r}")
        if scope is Scope.CUSTOM and not rules.matcher.accepted(normal):
            raise InputError(
                f"seed {raw} is outside the scope it defines: it matches no --include pattern"
            )
        ignored = rules.matcher.ignored_by(normal)
        if ignored:
            raise InputError(f"seed {raw} is outside the scope it defines: {ignored} excludes it")
        if normal not in out:
            out.append(normal)
    return out
