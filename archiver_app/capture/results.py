"""What a capture is asked to do and what it reports back (plain dataclasses).

:mod:`archiver_app.capture.engine` re-exports these; the crawl area builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


@dataclass(frozen=True)
class PageRules:
    """Per-page behaviour, from a crawl job's ruleset; the defaults suit a plain capture."""

    user_agent: str | None = None
    custom_js: str | None = None  # run after load, before scrolling
    autoscroll: bool = True
    page_timeout: float = 60.0
    settle_seconds: float = 1.0


class ResourceOutcome(StrEnum):
    """What became of one URL the page fetched; the code control flow reads."""

    COMPLETE = "complete"  # the whole response is in the WARC
    NO_RESPONSE = "no-response"  # the request never got an answer (nothing written)
    FAILED = "failed"  # the browser reported the load failed after the answer began
    TRUNCATED_LENGTH = "truncated-length"  # over the body size limit
    TRUNCATED_TIME = "truncated-time"  # still open when the page was done (a long-poll)
    TRUNCATED_DISCONNECT = "truncated-disconnect"  # the connection dropped mid-body
    TRUNCATED_UNSPECIFIED = "truncated-unspecified"  # the body could not be read back

    @classmethod
    def truncated(cls, reason: str) -> ResourceOutcome:
        """The outcome for a ``WARC-Truncated`` reason (``length``, ``time``...)."""
        return cls(f"truncated-{reason}")

    @property
    def counts_against_fidelity(self) -> bool:
        """A long-poll cut at the end of the page is expected; every other problem is not."""
        return self not in (ResourceOutcome.COMPLETE, ResourceOutcome.TRUNCATED_TIME)


@dataclass(frozen=True)
class ResourceInfo:
    """One URL the page fetched, as written to the WARC: ``outcome`` is the code, ``error``
    the sentence for people (None when complete)."""

    url: str
    status: int | None
    mime: str | None
    size: int
    error: str | None = None
    outcome: ResourceOutcome = ResourceOutcome.COMPLETE


@dataclass(frozen=True)
class CaptureResult:
    """The outcome of capturing one page. ``ok`` is False with ``error`` set on failure."""

    url: str
    final_url: str
    snapshot_id: int | None
    ok: bool
    http_status: int | None
    fidelity: str | None
    error: str | None
    outlinks: list[str] = field(default_factory=list)  # absolute http(s), fragment-free
    resources: list[ResourceInfo] = field(default_factory=list)
    bytes_written: int = 0
    duration: float = 0.0
    login: str | None = None  # a capture.login_check.LoginOutcome code: a login form came
