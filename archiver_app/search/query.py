"""What the user typed, turned into an FTS5 query, plus the structured filters.

The text syntax is forgiving, for search-as-you-type: words are ANDed; ``"exact phrase"``;
``-word`` excludes; ``a OR b``; the last word, while still being typed, matches as a
prefix (``clim`` finds "climate"). Every term is quoted before it reaches FTS5, so no input
can produce an FTS5 syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from archiver_app.errors import InputError

_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.I)


@dataclass(frozen=True)
class Query:
    """A search: free text plus filters (all optional; all given filters must hold).

    ``status`` is a code (``404``) or a class (``"4xx"``); ``mime`` is a full type
    (``text/html``) or a major type with a slash (``image/``); ``domain`` also matches its
    subdomains; ``since``/``until`` bound the capture time (aware datetimes, ``until``
    exclusive).
    """

    text: str = ""
    collection: str | None = None
    tag: str | None = None
    domain: str | None = None
    url_prefix: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    mime: str | None = None
    status: int | str | None = None
    fidelity: str | None = None
    prefix_last: bool = True  # treat the last bare word as a prefix (typing in progress)

    def status_range(self) -> tuple[int, int] | None:
        if self.status is None or self.status == "":
            return None
        if isinstance(self.status, int):
            return self.status, self.status
        text = str(self.status).strip()
        if text.isdigit():
            return int(text), int(text)
        if m := _STATUS_CLASS.match(text):
            low = int(m.group(1)) * 100
            return low, low + 99
        raise InputError(f"invalid status filter {self.status!r}: use a code like 404 or 4xx")


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _has_word(term: str) -> bool:
    return any(ch.isalnum() for ch in term)


def build_fts_query(text: str, *, prefix_last: bool = True) -> str | None:
    """The FTS5 MATCH expression for ``text``; None when it holds no searchable word."""
    positive: list[str] = []
    negative: list[str] = []
    pending_or = False
    matches = list(_TOKEN.finditer(text))
    ends_in_space = not text or text[-1].isspace()
    for index, m in enumerate(matches):
        neg, phrase, word = m.group(1), m.group(2), m.group(3)
        if word is not None and word == "OR":
            pending_or = bool(positive)
            continue
        if phrase is not None:
            term, is_phrase = phrase, True
        else:
            assert word is not None
            neg = "-" if word.startswith("-") and len(word) > 1 else ""
            term, is_phrase = (word[1:] if neg else word), False
        if not _has_word(term):
            continue
        expr = _quote(term)
        last = index == len(matches) - 1
        if prefix_last and last and not is_phrase and not ends_in_space and not neg:
            expr += "*"
        if neg:
            negative.append(expr)
        elif pending_or and positive:
            positive[-1] = f"({positive[-1]} OR {expr})"
            pending_or = False
        else:
            positive.append(expr)
    if not positive:
        return None
    query = " AND ".join(positive)
    for expr in negative:
        query = f"({query}) NOT {expr}"
    return query
