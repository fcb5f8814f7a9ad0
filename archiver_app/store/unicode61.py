"""Words as SQLite's ``unicode61 remove_diacritics 2`` tokenizer makes them, for every engine.

The full-text index on SQLite is FTS5 with that tokenizer: a character is part of a word
or a separator by its own Unicode tables (letters, digits and private-use characters make
words), upper case is folded to lower case, and accents are removed from Latin letters only
(``é`` is ``e``; Greek ``ή`` and Cyrillic ``й`` keep theirs; ligatures such as ``ﬁ`` and
fractions such as ``½`` stay one character). On PostgreSQL, and wherever Python looks for a
word in a page's text (search as you type, snippets), words must be exactly those, or a
page is found on one engine and not on the other.

So the rule is not written out here: each character is asked of SQLite's own tokenizer
the first time it is seen (``'a' + char + 'a'`` is one word, ``a<folded>a``, or two, ``a``
and ``a``), and remembered for the life of the process. A character's fold does not
depend on its neighbours in that tokenizer, so one question per character is exact; a
page in one script asks a few dozen questions once. ASCII text is folded by
``str.lower`` without asking.
"""

from __future__ import annotations

import os
import sqlite3
import threading

_lock = threading.Lock()
_probe_db: sqlite3.Connection | None = None


def _forget_in_child() -> None:
    """A forked child asks with its own connection and lock: the parent's may have been in
    use by another thread at the fork (what is known stays known)."""
    global _lock, _probe_db
    _lock, _probe_db = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_in_child)


def _probe(code: int) -> tuple[str, bool]:
    """``(folded character, part of a word?)`` of the character ``code``, as FTS5 says."""
    global _probe_db  # noqa: PLW0603  (one connection for the process, made when first needed)
    char = chr(code)
    if code == 0 or 0xD800 <= code <= 0xDFFF:
        return char, False  # NUL ends SQLite's text; a lone surrogate is not UTF-8
    with _lock:
        if _probe_db is None:
            _probe_db = sqlite3.connect(":memory:", check_same_thread=False)
            _probe_db.execute(
                "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')"
            )
            _probe_db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        db = _probe_db
        db.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", ("a" + char + "a",))
        terms = [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")]
        db.execute("DELETE FROM t")
    if len(terms) == 1:
        return terms[0][1:-1], True
    return char, False


class _Table(dict[int, str]):
    """A :meth:`str.translate` table filled as characters are met: a word character to its
    fold, a separator to itself (``split=False``) or to a space (``split=True``)."""

    def __init__(self, split: bool) -> None:
        super().__init__()
        self.split = split
        for code in range(128):  # ASCII: letters and digits make words, lower case
            char = chr(code).lower()
            self[code] = char if char.isalnum() or not split else " "

    def __missing__(self, code: int) -> str:
        folded, in_word = _probe(code)
        out = folded if in_word or not self.split else " "
        self[code] = out
        return out


_FOLD = _Table(split=False)
_SPLIT = _Table(split=True)


def fold(text: str) -> str:
    """``text`` with each word character folded as the tokenizer folds it (lower case,
    accents of Latin letters removed); separators are left as they are."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD)


def split_words(text: str) -> list[str]:
    """The words of ``text``, folded, in order: what FTS5 indexes."""
    return text.translate(_SPLIT).split()


__all__ = ["fold", "split_words"]
