"""What a capture is asked to do and what it reports back (plain dataclasses).

:mod:`archiver_app.capture.engine` re-exports these; the crawl area builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageRules:
    """Per-page behaviour, from a crawl job's ruleset; the defaults suit a plain capture."""

    user_agent: str | None = None
    custom_js: str | None = None  # run after load, before scrolling
    autoscroll: bool = True
    page_timeout: float = 60.0
    settle_seconds: float = 1.0


@dataclass(frozen=True)
class ResourceInfo:
    """One URL the page fetched, as written to the WARC."""

    url: str
    status: int | None
    mime: str | None
    size: int
    error: str | None = None


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
