"""What changed in a page's text between two captures: a line diff with its share of change.

Page texts are normalised first: runs of white space become one space, blank lines go, and
the user's ignore patterns (dates, counters, "3 minutes ago") are replaced by a marker so
that volatile parts do not count as changes; a line they match whole is left out. The diff
is by line: the common head and tail are cut off in linear time; the middle, capped at
:data:`MAX_LINES` lines a side, is pinned at the lines found once on each side (patience
diff), and only the gaps between those go to :class:`difflib.SequenceMatcher`, so time and
memory stay bounded however large the pages are (a cut is reported as ``truncated``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Any

#: Lines of each side's changed middle that are compared line by line.
MAX_LINES = 50_000
#: What an ignored part of the text is replaced with.
IGNORED = "…"
#: What the patterns mark ignored text with while lines are sorted out (never in page text).
_MARK = "\x00"

_SPACE = re.compile(r"[^\S\n]+")  # white space other than line breaks


class Op(StrEnum):
    EQUAL = "equal"
    DELETE = "delete"  # in the older capture only
    INSERT = "insert"  # in the newer capture only
    REPLACE = "replace"  # these older lines became those newer ones


@dataclass(frozen=True)
class Hunk:
    """One stretch of the diff: ``old`` lines of the older text became ``new`` lines."""

    op: Op
    old_start: int  # 0-based line number in the older (normalised) text
    old: tuple[str, ...]
    new_start: int
    new: tuple[str, ...]


@dataclass(frozen=True)
class TextDiff:
    hunks: tuple[Hunk, ...]
    old_lines: int
    new_lines: int
    #: lines that differ: a line rewritten counts once, as does a line added or removed
    #: (each change's larger side)
    changed_lines: int
    #: changed_lines / lines; 0.0 for two empty texts
    share_changed: float
    truncated: bool  # the middle was longer than MAX_LINES on a side: the rest counts whole
    #: the lines the two texts make side by side: those alike once, each change's larger
    #: side: the larger text's lines when its changes only rewrite, add or only remove
    #: (one line rewritten of five: 1 of 5, not 2 of 10, both captures' lines)
    lines: int = 0

    @property
    def changed(self) -> bool:
        return self.changed_lines > 0

    def changes(self) -> list[Hunk]:
        return [h for h in self.hunks if h.op is not Op.EQUAL]


def compile_ignore_patterns(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """The user's ignore patterns, compiled; a bad one is refused with its position.

    They are compiled with ``re.MULTILINE``: ``^`` and ``$`` match at the start and end of
    each line of the page text (``^Visitors today: \\d+$``), not only of the whole text.
    (The crawl's URL ignore patterns share the checking but are compiled without it.)
    """
    from archiver_app.crawl.rules import compile_pattern

    # an empty pattern leaves nothing out (a watch may hold one stored before they were refused)
    return [compile_pattern(p, what="ignore pattern", flags=re.MULTILINE) for p in patterns if p]


def normalise(text: str, ignore: Sequence[re.Pattern[str]] = ()) -> list[str]:
    """The text's lines as compared: white space collapsed, ignored parts marked, no blanks.

    White space is collapsed and each line trimmed before the patterns run, so a pattern's
    ``$`` meets the end of the words, not a trailing space. A line the patterns match
    whole (``^Visitors today: \\d+$``) is left out, as a blank line is: its coming and going
    is no change. The patterns mark what they match with a character page text cannot
    hold (NUL), so a page's own "…" is never taken for ignored text.
    """
    text = _SPACE.sub(" ", text)  # whole-text passes: one call into the C engine each
    if not ignore:
        return [line for line in (raw.strip() for raw in text.split("\n")) if line]
    text = "\n".join(line.strip() for line in text.replace(_MARK, "").split("\n"))
    for pattern in ignore:
        text = pattern.sub(_MARK, text)
    lines = (raw.strip() for raw in text.split("\n"))
    return [line.replace(_MARK, IGNORED) for line in lines if line.replace(_MARK, "").strip()]


def ignores_any(text: str, ignore: Sequence[re.Pattern[str]]) -> bool:
    """Whether the patterns leave out anything of ``text`` as :func:`normalise` reads it (a
    pattern that matches only the empty string leaves out nothing)."""
    if not ignore:
        return False
    text = "\n".join(line.strip() for line in _SPACE.sub(" ", text).split("\n"))
    return any(m.end() > m.start() for pattern in ignore for m in pattern.finditer(text))


def diff_lines(old: Sequence[str], new: Sequence[str]) -> TextDiff:
    """The line diff of two normalised texts."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid = old[head : len(old) - tail]
    new_mid = new[head : len(new) - tail]
    truncated = len(old_mid) > MAX_LINES or len(new_mid) > MAX_LINES
    hunks: list[Hunk] = []
    if head:
        hunks.append(Hunk(Op.EQUAL, 0, tuple(old[:head]), 0, tuple(new[:head])))
    hunks.extend(_middle(old_mid[:MAX_LINES], new_mid[:MAX_LINES], head))
    if truncated:
        # Past the cap the rest of each middle is reported as replaced, unread line by line.
        old_rest, new_rest = old_mid[MAX_LINES:], new_mid[MAX_LINES:]
        hunks.append(
            Hunk(
                Op.REPLACE,
                head + MAX_LINES,
                tuple(old_rest),
                head + MAX_LINES,
                tuple(new_rest),
            )
        )
    if tail:
        hunks.append(
            Hunk(
                Op.EQUAL,
                len(old) - tail,
                tuple(old[len(old) - tail :]),
                len(new) - tail,
                tuple(new[len(new) - tail :]),
            )
        )
    changed = sum(max(len(h.old), len(h.new)) for h in hunks if h.op is not Op.EQUAL)
    total = changed + sum(len(h.old) for h in hunks if h.op is Op.EQUAL)
    return TextDiff(
        hunks=tuple(hunks),
        old_lines=len(old),
        new_lines=len(new),
        changed_lines=changed,
        share_changed=changed / total if total else 0.0,
        truncated=truncated,
        lines=total,
    )


def _middle(old: Sequence[str], new: Sequence[str], offset: int) -> list[Hunk]:
    """Diff the changed middle: split at anchors (patience diff), then match each gap."""
    ops: list[tuple[str, int, int, int, int]] = []
    prev_i = prev_j = 0
    for i, j in [*_anchors(old, new), (len(old), len(new))]:
        ops.extend(_gap_opcodes(old, new, (prev_i, i, prev_j, j)))
        if i < len(old):
            ops.append(("equal", i, i + 1, j, j + 1))
        prev_i, prev_j = i + 1, j + 1
    merged: list[list[Any]] = []
    for tag, i1, i2, j1, j2 in ops:
        if i1 == i2 and j1 == j2:
            continue
        if merged and merged[-1][0] == tag and merged[-1][2] == i1 and merged[-1][4] == j1:
            merged[-1][2], merged[-1][4] = i2, j2  # join neighbours of one kind
        else:
            merged.append([tag, i1, i2, j1, j2])
    return [
        Hunk(Op(tag), offset + i1, tuple(old[i1:i2]), offset + j1, tuple(new[j1:j2]))
        for tag, i1, i2, j1, j2 in merged
    ]


def _anchors(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """Lines found exactly once on each side, kept in an order both sides agree on.

    This is patience diff's first step: the longest increasing run of such lines (by their
    place in the newer text) pins the two texts together in O(n log n), so the quadratic
    matcher only ever sees the short gaps between anchors.
    """
    count_old: dict[str, int] = {}
    for i, line in enumerate(old):
        count_old[line] = -1 if line in count_old else i
    count_new: dict[str, int] = {}
    for j, line in enumerate(new):
        count_new[line] = -1 if line in count_new else j
    pairs = [
        (i, count_new[line])
        for line, i in count_old.items()
        if i >= 0 and count_new.get(line, -1) >= 0
    ]
    pairs.sort()
    # Longest increasing subsequence of the new positions (patience sorting).
    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_i, j) in enumerate(pairs):
        at = bisect_left(tails, j)
        if at == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[at] = j
            tail_at[at] = k
        back[k] = tail_at[at - 1] if at else -1
    chain = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]


def _gap_opcodes(
    old: Sequence[str], new: Sequence[str], gap: tuple[int, int, int, int]
) -> list[tuple[str, int, int, int, int]]:
    i1, i2, j1, j2 = gap
    if i1 == i2 and j1 == j2:
        return []
    if i1 == i2:
        return [("insert", i1, i2, j1, j2)]
    if j1 == j2:
        return [("delete", i1, i2, j1, j2)]
    # autojunk stays on: in a long gap, lines that repeat everywhere (a footer, "Reply")
    # would otherwise make the matcher quadratic.
    matcher = SequenceMatcher(None, old[i1:i2], new[j1:j2], autojunk=True)
    return [
        (tag, i1 + a1, i1 + a2, j1 + b1, j1 + b2) for tag, a1, a2, b1, b2 in matcher.get_opcodes()
    ]


def diff_texts(old: str, new: str, ignore: Sequence[re.Pattern[str]] = ()) -> TextDiff:
    """Normalise both texts with the same ignore patterns, then diff them by line."""
    return diff_lines(normalise(old, ignore), normalise(new, ignore))


def unified(diff: TextDiff, *, context: int = 2) -> list[str]:
    """The diff as ``-``/``+`` lines with ``context`` unchanged lines around each change,
    for a terminal. Where unchanged lines are left out, and before a change at the top,
    ``@@ line N @@`` gives the place (in the newer text as compared: blank lines left out)
    of the line under it, so each change has its place, with no context too."""
    out: list[str] = []
    last = len(diff.hunks) - 1
    for index, hunk in enumerate(diff.hunks):
        if index == 0 and hunk.op is not Op.EQUAL:  # a change at the top: its place too
            out.append(f"@@ line {hunk.new_start + 1} @@")
        if hunk.op is not Op.EQUAL:
            out.extend("- " + line for line in hunk.old)
            out.extend("+ " + line for line in hunk.new)
            continue
        lines = hunk.old
        lead = lines[:context] if index > 0 else ()  # after the change before it
        trail = lines[len(lines) - context :] if index < last and context else ()
        if 0 < index < last and len(lead) + len(trail) >= len(lines):
            out.extend("  " + line for line in lines)  # nothing left out
            continue
        out.extend("  " + line for line in lead)
        if index < last:  # a change follows: say where
            out.append(f"@@ line {hunk.new_start + len(lines) - len(trail) + 1} @@")
            out.extend("  " + line for line in trail)
    return out
