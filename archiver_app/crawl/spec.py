"""What a job is asked to do: seeds, scope, limits (stored as JSON in ``jobs.config``).

Also the small parsers the command line and the GUI share for sizes (``500M``) and
durations (``2h``), and :class:`JobContext`, the rules and scope of a job at one
``settings_age``, which workers cache and reload when the age changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from archiver_app.crawl.rules import Rules
from archiver_app.crawl.scope import Scope, ScopeChecker
from archiver_app.errors import InputError

#: A new crawl's scope and limits unless told otherwise: the same for ``archiver crawl`` and
#: the app's crawl dialog, so that a crawl started with no options stays near its seed.
DEFAULT_SCOPE = "prefix"
DEFAULT_DEPTH = 2
DEFAULT_MAX_PAGES = 200


@dataclass(frozen=True)
class Limits:
    max_depth: int | None = None  # seeds are depth 0
    max_pages: int | None = None  # pages accepted into the queue
    max_bytes: int | None = None  # bytes written by captures
    max_duration: float | None = None  # seconds since the job started

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_pages", "max_bytes", "max_duration"):
            value = getattr(self, name)
            if value is not None and value < (0 if name == "max_depth" else 1):
                raise InputError(f"{name.replace('_', '-')} must be positive, got {value}")


@dataclass(frozen=True)
class JobSpec:
    """Seeds, scope and limits of a job; rules live in :class:`Rules` (versioned)."""

    seeds: tuple[str, ...]
    scope: Scope = Scope.HOST
    collection: str = "default"
    tags: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    lease_seconds: float = 120.0  # how long a claim lasts without a heartbeat
    profile: str | None = None  # the browser profile pages are captured in (logged in)

    def to_json(self) -> dict[str, Any]:
        return {
            **({"profile": self.profile} if self.profile else {}),
            "seeds": list(self.seeds),
            "scope": self.scope.value,
            "collection": self.collection,
            "tags": list(self.tags),
            "limits": {
                "max_depth": self.limits.max_depth,
                "max_pages": self.limits.max_pages,
                "max_bytes": self.limits.max_bytes,
                "max_duration": self.limits.max_duration,
            },
            "lease_seconds": self.lease_seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JobSpec:
        return cls(
            seeds=tuple(data.get("seeds", ())),
            scope=Scope(data.get("scope", Scope.HOST)),
            collection=str(data.get("collection", "default")),
            tags=tuple(data.get("tags", ())),
            limits=Limits(**dict(data.get("limits") or {})),
            lease_seconds=float(data.get("lease_seconds", 120.0)),
            profile=str(data["profile"]) if data.get("profile") else None,
        )


@dataclass(frozen=True)
class JobContext:
    """A job's spec and newest rules at one ``settings_age`` (what a worker caches)."""

    job_id: int
    spec: JobSpec
    rules: Rules
    ruleset_version: int
    settings_age: int
    checker: ScopeChecker
    # a watch or one of its runs: an error page captured is the page's capture (watch runs
    # report it as an error answer, not a failure), though the queue retries a 5xx alike
    watched: bool = False

    @classmethod
    def build(
        cls,
        job_id: int,
        config: Mapping[str, Any],
        rules: Mapping[str, Any],
        version: int,
        age: int,
        *,
        watched: bool = False,
    ) -> JobContext:
        spec = JobSpec.from_json(config)
        parsed = Rules.from_json(rules)
        checker = ScopeChecker(spec.seeds, spec.scope, parsed)
        return cls(job_id, spec, parsed, version, age, checker, watched)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)?\s*$", re.IGNORECASE)
_DURATION_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_size(text: str) -> int:
    """``"500M"`` -> 524288000 (binary units; ``B``, ``KiB``, ``MB`` all accepted)."""
    match = _SIZE.match(text)
    if not match:
        raise InputError(f"cannot read the size {text!r}; write for example 500M or 2G")
    unit = (match.group(2) or "").lower()[:1]
    return int(float(match.group(1)) * _SIZE_UNITS[unit])


def parse_duration(text: str) -> float:
    """``"90s"``, ``"30m"``, ``"2h"``, ``"1d"`` (a bare number is seconds)."""
    match = _DURATION.match(text)
    if not match:
        raise InputError(f"cannot read the duration {text!r}; write for example 90s, 30m or 2h")
    return float(match.group(1)) * _DURATION_UNITS[(match.group(2) or "").lower()]


def parse_delay(text: str) -> tuple[float, float]:
    """``"1"`` -> (1, 1); ``"0.5-2"`` -> (0.5, 2) seconds."""
    try:
        parts = [float(x) for x in text.split("-", 1)]
    except ValueError as exc:
        raise InputError(f"cannot read the delay {text!r}; write for example 1 or 0.5-2") from exc
    return (parts[0], parts[-1])


def check_schedule(schedule: str | None) -> str | None:
    """``hourly``, ``daily``, ``weekly`` or five cron fields (refused with the position of
    the error); returned as given, trimmed."""
    if schedule is None:
        return None
    from archiver_app.watch.schedule import parse_schedule

    return parse_schedule(schedule).text


__all__: Sequence[str] = [
    "JobContext",
    "JobSpec",
    "Limits",
    "check_schedule",
    "parse_delay",
    "parse_duration",
    "parse_size",
]
