"""Plain URL lists: one URL per line; blank lines and ``#`` comments are ignored."""

from __future__ import annotations

from dataclasses import dataclass, field

from archiver_app.errors import InputError
from archiver_app.validation import validate_capture_url


@dataclass
class UrlList:
    urls: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line 3: malformed URL ..."


def parse_url_list(text: str) -> UrlList:
    result = UrlList()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            result.urls.append(validate_capture_url(line))
        except InputError as exc:
            result.problems.append(f"line {number}: {exc}")
    return result


def looks_like_url_list(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return bool(lines) and lines[0].lower().startswith(("http://", "https://"))
