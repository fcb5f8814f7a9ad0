"""What the user typed, turned into an FTS5 query, plus the structured filters.

The text syntax is forgiving, for search-as-you-type: words are ANDed; ``"exact phrase"``;
``-word`` excludes; ``a OR b``; the last word, while still being typed, matches as a
prefix (``clim`` finds "climate"). Every term is quoted before it reaches FTS5, so no input
can produce an FTS5 syntax error, and the expression is flat, so no number of words can
overflow its parser (at most :data:`MAX_TERMS` words are taken). Only excluded words
(``-draft``): every capture an empty search would list, minus those holding one. Text with
no word at all (``OR``, ``-``, ``(``) is :attr:`TextQuery.ignored`: the search functions
refuse it rather than list everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from archiver_app.errors import InputError

_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: A word as the full-text index sees one (``archiver_app.store.tsearch.WORD``).
_WORD = re.compile(r"[^\W_]+")


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
    state: str | None = None  # a SnapshotState; without text, only complete captures
    prefix_last: bool = True  # treat the last bare word as a prefix (typing in progress)

    def status_range(self) -> tuple[int, int] | None:
        """The codes the status filter allows, low and high included.

        Raises:
            InputError: not an HTTP status code (100 to 599) or class (``1xx``..``5xx``).
        """
        if self.status is None or self.status == "":
            return None
        code: int | None = None
        if isinstance(self.status, int) and not isinstance(self.status, bool):
            code = self.status
        elif isinstance(self.status, str):
            text = self.status.strip()
            # isascii: "²".isdigit() is true and int("²") fails
            if text.isascii() and text.isdigit() and len(text) <= 3:
                code = int(text)
            elif m := _STATUS_CLASS.match(text):
                low = int(m.group(1)) * 100
                return low, low + 99
        if code is not None and 100 <= code <= 599:
            return code, code
        raise InputError(
            f"invalid status filter {self.status!r}: use a code from 100 to 599 like 404, "
            "or a class like 4xx"
        )


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


#: A typed fragment shorter than this is matched as a whole word, not a prefix: "cl*"
#: would merge the postings of thousands of terms on every keystroke, and finds little a
#: person means while still typing.
MIN_PREFIX = 3


def _has_word(term: str) -> bool:
    return any(ch.isalnum() for ch in term)


#: The most words a search may hold (a phrase counts each of its words; OR and excluded words
#: count too). Past it the query is refused (:class:`InputError`): each word is a term the
#: full-text index looks up and, on PostgreSQL, ranks one by one.
MAX_TERMS = 200


@dataclass(frozen=True)
class TextQuery:
    """Typed text, parsed (:func:`parse_text`).

    ``match``: the MATCH expression every hit satisfies (its excluded words included as
    ``NOT``), or None when no word is required. ``excluded``: when no word is required, the
    MATCH expression of the excluded words (``"a" OR "b"``): the hits are the captures an
    empty search finds, minus those holding any of them. ``ignored``: the text is not blank
    but holds no word to search for (``OR``, ``-``, ``(``).
    """

    match: str | None = None
    excluded: str | None = None
    ignored: bool = False

    @property
    def has_words(self) -> bool:
        return self.match is not None or self.excluded is not None


def no_words_message(text: str) -> str:
    """What to say of ``text`` when it holds no word to search for."""
    shown = " ".join(_CONTROL.sub(" ", text).split())
    return (
        f"nothing to search for in {shown!r}: a search needs a word of letters or digits "
        "(OR, '-' and punctuation alone match nothing)"
    )


def _group(exprs: list[str]) -> str:
    return exprs[0] if len(exprs) == 1 else "(" + " OR ".join(exprs) + ")"


def parse_text(text: str, *, prefix_last: bool = True) -> TextQuery:
    """The MATCH expressions for ``text`` (:class:`TextQuery`). The expressions are flat
    (``("a" OR "b" OR "c") NOT "d" NOT "e"``: one level of parentheses at most), so no
    number of words overflows FTS5's parser stack.

    Control characters are spaces: FTS5 reads its query as a C string, so a NUL in a
    quoted term ended it ("unterminated string").

    Raises:
        InputError: more than :data:`MAX_TERMS` words.
    """
    text = _CONTROL.sub(" ", text)
    positive: list[list[str]] = []  # groups of terms ORed together; the groups are ANDed
    negative: list[str] = []
    pending_or = False
    words = 0
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
        words += len(_WORD.findall(term))
        if words > MAX_TERMS:
            raise InputError(
                f"too many words in the search: at most {MAX_TERMS} (a phrase counts each "
                "of its words, excluded and OR words too)"
            )
        expr = _quote(term)
        last = index == len(matches) - 1
        # still typed: the last word, or the last word of a phrase whose quote is open
        open_phrase = is_phrase and not m.group(0).endswith('"', 1)
        if (
            prefix_last
            and last
            and (not is_phrase or open_phrase)
            and not ends_in_space
            and not neg
            and len(_WORD.findall(term)[-1] if is_phrase else term) >= MIN_PREFIX
        ):
            expr += "*"
        if neg:
            negative.append(expr)
        elif pending_or and positive:
            positive[-1].append(expr)
            pending_or = False
        else:
            positive.append([expr])
    if not positive:
        if negative:
            return TextQuery(excluded=" OR ".join(negative))
        return TextQuery(ignored=bool(text.strip()))
    query = " AND ".join(_group(g) for g in positive)
    return TextQuery(match=" ".join([query, *(f"NOT {expr}" for expr in negative)]))


def build_fts_query(text: str, *, prefix_last: bool = True) -> str | None:
    """The FTS5 MATCH expression for ``text``; None when it holds no word a capture must
    hold (no word at all, or only excluded ones: see :func:`parse_text`).

    Raises:
        InputError: more than :data:`MAX_TERMS` words.
    """
    return parse_text(text, prefix_last=prefix_last).match
