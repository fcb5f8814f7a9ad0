"""What a capture is asked to do and what it reports back (plain dataclasses).

:mod:`archiver_app.capture.engine` re-exports these; the crawl area builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

from archiver_app.capture.extract import first_line
from archiver_app.urls import display_url


@dataclass(frozen=True)
class PageRules:
    """Per-page behaviour, from a crawl job's ruleset; the defaults suit a plain capture."""

    user_agent: str | None = None
    custom_js: str | None = None  # run after load, before scrolling
    autoscroll: bool = True
    login_check: bool = True  # False: a page that looks like a login form is kept as it is
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
    ALTERED = "altered"  # kept, but not byte for byte (text encoded again in another charset)

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


def browser_favicon(url: str) -> bool:
    """Is ``url`` the ``/favicon.ico`` the browser asks a site for by itself (once a site
    and session)? Not one of the page's resources: whether it answers, or is there at all,
    says nothing about the page (a crawl's figures and a comparison leave it out)."""
    return urlsplit(url).path == "/favicon.ico"


def given_and_final(url: str, final_url: str) -> str:
    """The address asked for, then where it ended when that differs (``URL -> FINAL``):
    progress lines can be matched to the addresses given. Both as people read them
    (:func:`archiver_app.urls.display_url`: ``/мир``, not ``/%D0%BC%D0%B8%D1%80``)."""
    shown = display_url(url)
    return shown if final_url in ("", url) else f"{shown} -> {display_url(final_url)}"


def answered_once(resources: list[ResourceInfo]) -> list[ResourceInfo]:
    """``resources`` without the requests that got no response where the same address was
    answered all the same: a worker's script answers in the worker's own session (or is
    fetched again), an answer the browser blocked is fetched again; the page's request of
    it that saw nothing is then no missing resource. Nor is a part (``206``) a player let
    go of, or that was cut off, of a file stored whole (a ``200``): replay answers every
    range from the whole copy."""
    answered = {r.url for r in resources if r.status is not None}
    whole = {r.url for r in resources if r.status == 200 and r.outcome is ResourceOutcome.COMPLETE}
    gone = ResourceOutcome.NO_RESPONSE
    return [
        r
        for r in resources
        if not (r.outcome is gone and r.url in answered)
        and not (r.status == 206 and r.outcome.counts_against_fidelity and r.url in whole)
    ]


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
    #: Why its rows could not be saved ("database unreachable: …"); then the snapshot is
    #: still ``pending`` and the other fields say what was captured, not what is recorded.
    unrecorded: str | None = None
    #: What happened that the outcome line should say (the page went on elsewhere: .departed)
    remark: str | None = None


def describe_failure(message: str, url: str, timeout: float) -> str:
    """A readable sentence for a Playwright navigation error."""
    text = first_line(message)
    parts = urlsplit(url)
    host = parts.hostname or url
    try:
        port = parts.port or ""
    except ValueError:  # an address whose port is not a number
        port = ""
    table = (
        ("ERR_NAME_NOT_RESOLVED", f"the host name {host!r} could not be resolved (DNS)"),
        ("ERR_CONNECTION_REFUSED", f"the connection to {host} was refused"),
        ("ERR_CONNECTION_RESET", f"the connection to {host} was reset"),
        ("ERR_CONNECTION_CLOSED", f"{host} closed the connection without an answer"),
        ("ERR_EMPTY_RESPONSE", f"{host} closed the connection without an answer"),
        ("ERR_CERT_", f"TLS error: the certificate of {host} is not trusted ({text})"),
        ("ERR_SSL_", f"TLS error talking to {host} ({text})"),
        ("ERR_INTERNET_DISCONNECTED", "there is no network connection"),
        ("ERR_ADDRESS_UNREACHABLE", f"{host} is unreachable"),
        ("ERR_TIMED_OUT", f"{host} did not answer in time"),
        ("ERR_UNSAFE_PORT", f"browsers do not connect to port {port} (kept for other services)"),
        ("ERR_TOO_MANY_REDIRECTS", f"{host} redirects in a loop"),
        ("Timeout", f"the page did not load within {timeout:g} s"),
        ("has been closed", "the browser crashed or closed while capturing"),
        ("Target crashed", "the page crashed the browser tab"),
    )
    for needle, sentence in table:
        if needle in message:
            return sentence
    return text
