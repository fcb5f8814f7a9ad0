"""Words are made exactly as SQLite's FTS5 tokenizer makes them, in every script: the
words PostgreSQL indexes and the words search as you type looks for are the ones SQLite's
index holds."""

from __future__ import annotations

import random
import sqlite3

from archiver_app.store.tsearch import fts_to_tsquery, words
from archiver_app.store.unicode61 import fold

#: Ranges of several scripts and of the characters that told engines apart before:
#: Latin with accents, Greek with tonos, Cyrillic, combining marks, ligatures, fractions,
#: circled letters, CJK, Devanagari (spacing marks), private use, punctuation.
RANGES = [
    (0x20, 0x7E),
    (0xA0, 0x24F),
    (0x300, 0x36F),
    (0x370, 0x3FF),
    (0x1F00, 0x1FFF),
    (0x400, 0x4FF),
    (0x900, 0x97F),
    (0x2000, 0x215F),
    (0x2460, 0x24FF),
    (0x3040, 0x30FF),
    (0x4E00, 0x4E50),
    (0xE000, 0xE010),
    (0xFB00, 0xFB06),
    (0xFF00, 0xFF5E),
]


def _sqlite_words(texts: list[str]) -> list[list[str]]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    out: list[list[str]] = [[] for _ in texts]
    for term, doc in db.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    return out


def test_words_are_sqlites_words_in_every_script() -> None:
    rng = random.Random(61)
    pool = [chr(c) for lo, hi in RANGES for c in range(lo, hi + 1)]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    texts += ["Αθήνα", "Ёлка йод", "ﬁnal ½", "İstanbul", "le cafe\u0301", "\u24b7oat", "東京の天気"]
    expected = _sqlite_words(texts)
    assert [words(t) for t in texts] == expected
    # fold keeps the separators and folds each word in place
    for text, found in zip(texts, expected, strict=True):
        assert all(w in fold(text) for w in found)


def test_greek_and_cyrillic_keep_their_accents() -> None:
    assert words("Αθήνα и ёлка, Café") == ["αθήνα", "и", "ёлка", "cafe"]


def test_a_word_whose_older_fold_differs_is_asked_both_ways() -> None:
    """Pages a shared library indexed before kept Greek words without accents: they are
    still found until the index is rebuilt."""
    assert fts_to_tsquery('"Αθήνα"') == "('αθήνα' | 'αθηνα')"
    assert (
        fts_to_tsquery('"ﬁnal report"*') == "(('ﬁnal' <-> 'report':*) | ('final' <-> 'report':*))"
    )
    assert fts_to_tsquery('"café"') == "'cafe'"  # the same in both: asked once
