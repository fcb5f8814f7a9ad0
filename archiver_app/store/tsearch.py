"""Words as the full-text index sees them, and PostgreSQL's ``tsvector``/``tsquery`` of them.

SQLite's FTS5 index uses the ``unicode61 remove_diacritics 2`` tokenizer: case and the
accents of Latin letters folded, runs of letters and digits make words, no stemming
(:mod:`archiver_app.store.unicode61` asks SQLite for its rule). On PostgreSQL the same words
must match, whatever the server's locale, so Archiver does the tokenizing itself: the
``tsvector`` is written as a literal of folded words with their positions and a weight per
field (title ``A``, tags ``B``, address ``C``, body ``D``), and a query expression from
:func:`archiver_app.search.query.build_fts_query` becomes a ``tsquery`` of the same words
(:func:`fts_to_tsquery`). No text search configuration or dictionary takes part.

PostgreSQL's limits: a position above 16,383 is stored as 16,383 (so a phrase is found
only within a page's first 16,383 words), a lexeme keeps at most 255 positions, a word of
more than 2,047 bytes is left out, and a ``tsvector`` stops growing before 1 MB.

Libraries indexed before the rule came from SQLite folded every accent, in any script, and
split ligatures and fractions (Unicode's NFKD): a query word whose old fold differs is
asked in both folds (``('αθήνα' | 'αθηνα')``), so pages indexed then are found as before
until ``archiver index rebuild`` writes them again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from archiver_app.store.unicode61 import fold, split_words

#: A word: a run of letters and digits (what unicode61 keeps).
WORD = re.compile(r"[^\W_]+")
_TERMS = re.compile(r'"((?:[^"]|"")*)"(\*?)|(\()|(\))|(AND|OR|NOT)')

MAX_POSITION = 16_383
MAX_POSITIONS_PER_WORD = 255
MAX_WORD_BYTES = 2_047
#: The size a tsvector literal is kept under (PostgreSQL refuses 1 MB and more).
MAX_VECTOR_BYTES = 900_000
#: Field weights in tsvector order: title, tags, url, body.
FIELD_WEIGHTS = (("title", "A"), ("tags", "B"), ("url", "C"), ("body", "D"))


def words(text: str) -> list[str]:
    """The indexed words of ``text``, in order."""
    if text.isascii():
        return WORD.findall(text.lower())
    return split_words(text)


def _older_words(text: str) -> list[str]:
    """The words of ``text`` as libraries indexed them before the tokenizer's own rule was
    followed: every accent removed, compatibility forms decomposed (NFKD)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return WORD.findall("".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def tsvector_literal(fields: Iterable[tuple[str, str]]) -> str:
    """The ``tsvector`` input text for ``(weight letter, text)`` fields, in order."""
    positions: dict[str, list[str]] = {}
    size = 0
    pos = 0
    for weight, text in fields:
        for word in words(text):
            pos = min(pos + 1, MAX_POSITION)
            held = positions.get(word)
            if held is None:
                if len(word.encode()) > MAX_WORD_BYTES or size > MAX_VECTOR_BYTES:
                    continue
                held = positions[word] = []
                size += len(word.encode()) + 8
            if len(held) < MAX_POSITIONS_PER_WORD:
                held.append(f"{pos}{weight}")
                size += 2
    return " ".join(f"'{w}':{','.join(p)}" for w, p in positions.items())


def _term(term: str, prefix: bool) -> str | None:
    text = term.replace('""', '"')
    found = words(text)
    if not found:
        return None
    rendered = _phrase(found, prefix)
    if not text.isascii():
        older = _older_words(text)
        if older and older != found:  # pages indexed before: see the module docstring
            return f"({rendered} | {_phrase(older, prefix)})"
    return rendered


def _phrase(found: list[str], prefix: bool) -> str:
    parts = [f"'{w}'" for w in found]
    if prefix:
        parts[-1] += ":*"
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


def fts_to_tsquery(fts: str) -> str:
    """The ``tsquery`` text for a MATCH expression built by ``build_fts_query``: quoted
    terms (a phrase when they hold several words), ``*`` prefixes, AND, OR, NOT and
    parentheses. Words hold only letters and digits, so no input can break the syntax."""
    out: list[str] = []
    for m in _TERMS.finditer(fts):
        term, star, opening, closing, op = m.groups()
        if term is not None:
            rendered = _term(term, bool(star))
            out.append(rendered if rendered is not None else "''")
        elif opening:
            out.append("(")
        elif closing:
            out.append(")")
        else:
            out.append({"AND": "&", "OR": "|", "NOT": "& !"}[op])
    return " ".join(out)


def positive_terms(fts: str) -> list[str]:
    """The ``tsquery`` of each term of ``fts`` that is not excluded by NOT, in order (the
    terms bm25 scores)."""
    out: list[str] = []
    after_not = False
    for m in _TERMS.finditer(fts):
        term, star, _opening, _closing, op = m.groups()
        if op is not None:
            after_not = op == "NOT"
        elif term is not None:
            rendered = _term(term, bool(star))
            if rendered is not None and not after_not:
                out.append(rendered)
            after_not = False
    return out


__all__ = [
    "FIELD_WEIGHTS",
    "WORD",
    "fold",
    "fts_to_tsquery",
    "positive_terms",
    "tsvector_literal",
    "words",
]
