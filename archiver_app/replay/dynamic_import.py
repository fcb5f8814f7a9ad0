"""Give a script's ``import(specifier)`` to a function first, for a specifier it computes.

``import()`` is syntax: no page script can wrap it, and the module it loads is fetched in
CORS mode, which the replay view's redirect into its own scheme loses. A full address
written as a string is pointed at the archive in the text
(:func:`archiver_app.replay.rewrite.prefix_module_imports`); one the script computes
(``import(CDN + "/x.js")``) can only be changed when the script runs. So
``import(expression`` becomes ``import((globalThis.__archiverImport||(s=>s))(expression)``,
and the view's page script defines that function (a full ``http(s):`` address becomes its
archive address; anything else, a relative one included, is left as it is). Without the
function the specifier is what it was.

The script is read once, start to end, as JavaScript's tokens (strings, templates and
their substitutions, comments, regular expressions told from divisions by the token
before them, brackets), so only a call in the code is changed: never ``obj.import(``, a
method named ``import``, ``import.meta``, nor ``import(`` in a string, a comment, a
template's text or a regular expression. When the reading goes wrong (a string, comment,
template or regular expression not closed, brackets that do not match), the script is
left as it is, whole. The reading is linear in the script's size.
"""

from __future__ import annotations

import re

IMPORT_HOOK = "__archiverImport"

_HOOK = b"(globalThis." + IMPORT_HOOK.encode() + b"||(s=>s))("
# An import( that may hold a computed specifier: not a method (".import("), not one whose
# argument is one plain string or template (most bundles' chunks): no reading at all. (The
# look behind follows the literal word: the search then skips to each "import" at C speed.)
_CANDIDATE = re.compile(
    rb"import(?<![\w$.]import)\s*(?:/\*|\("
    rb"(?!\s*(?:'[^'\\\n\r]*'|\"[^\"\\\n\r]*\"|`[^`\\$]*`)\s*[,)]))"
)
_ESCAPE = rb"\\(?:\r\n|[\s\S])"  # a backslash and what it escapes (a line's end too)
# A template's text up to its end (group 1 "`") or its next substitution (group 1 "${").
_TEMPLATE_TEXT = rb"[^`\\$]*(?:(?:" + _ESCAPE + rb"|\$(?!\{))[^`\\$]*)*(`|\$\{)"
_TOKEN = re.compile(
    rb"(?P<space>\s+)"
    rb"|(?P<comment>//[^\n\r]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/)"
    rb"|(?P<string>'[^'\\\n\r]*(?:" + _ESCAPE + rb"[^'\\\n\r]*)*'"
    rb"|\"[^\"\\\n\r]*(?:" + _ESCAPE + rb"[^\"\\\n\r]*)*\")"
    rb"|(?P<template>`" + _TEMPLATE_TEXT + rb")"
    rb"|(?P<word>[\w$\x80-\xff]+)"
    rb"|(?P<bracket>[(){}\[\]])"
    rb"|(?P<slash>/(?!\*))"
    rb"|(?P<operator>[^\s\w$\x80-\xff(){}\[\]/'\"`]+)"
)  # fmt: skip
_TEMPLATE_REST = re.compile(_TEMPLATE_TEXT)
_REGEX = re.compile(rb"/(?:[^/\\\[\n\r]|\\[^\n\r]|\[(?:[^\]\\\n\r]|\\[^\n\r])*\])+/[\w$]*")
# Words after which "/" starts a regular expression (after any other word: a division).
_BEFORE_EXPRESSION = frozenset(
    b"return typeof instanceof in of new delete void throw case do else yield await".split()
)
_CONDITION = frozenset((b"if", b"while", b"for", b"with"))  # "if (a) /x/.test(b)"
_BLOCK_AFTER_WORD = frozenset((b"do", b"else", b"try", b"finally"))


class _Import:
    """An open ``import(``: where its argument starts, the first ``,`` outside brackets,
    and how many tokens its first argument has (``literal``: one string, no ``${``)."""

    __slots__ = ("comma", "literal", "start", "tokens")

    def __init__(self, start: int) -> None:
        self.start, self.comma, self.tokens, self.literal = start, -1, 0, False


# Long: one loop over the tokens, a rule for each kind; split, each part would need the
# reader's whole state (brackets open, "/" a regex or not, the last token).
def _hook_points(script: bytes) -> list[tuple[int, int]] | None:
    """Where each computed ``import(`` argument starts and ends, or None when the script
    cannot be read."""
    at = script.index(b"\n") if script.startswith(b"#!") and b"\n" in script else 0
    open_: list[bytes | _Import] = []  # ( (k: if/for...) [ { (block) {e (object) ${ imports
    points: list[tuple[int, int]] = []
    pending: tuple[int, int] | None = None  # a call: unless "{" follows (a method named import)
    regex_ok, last, import_word = True, b"", False
    while at < len(script):
        token = _TOKEN.match(script, at)
        if token is None:  # a string or comment never closed, a lone backslash
            return None
        kind, lexeme = token.lastgroup, token.group()
        if kind in ("space", "comment"):
            at = token.end()
            continue
        if pending is not None:
            if lexeme != b"{":
                points.append(pending)
            pending = None
        top = open_[-1] if open_ else None
        if isinstance(top, _Import) and top.comma < 0 and lexeme not in (b")", b"]", b"}"):
            top.tokens += 1
            top.literal = kind == "string" or (kind == "template" and lexeme.endswith(b"`"))
        if kind == "slash" and regex_ok:
            token = _REGEX.match(script, at)
            if token is None:
                return None
            regex_ok = False
        elif kind in ("string", "template"):
            regex_ok = kind == "template" and lexeme.endswith(b"${")
            if regex_ok:
                open_.append(b"${")
        elif kind == "word":
            regex_ok = lexeme in _BEFORE_EXPRESSION
            if lexeme == b"import" and not (last.endswith(b".") and not last.endswith(b"...")):
                import_word = True
                last = lexeme
                at = token.end()
                continue
        elif kind in ("slash", "operator"):
            regex_ok = not lexeme.endswith((b"++", b"--"))
            if isinstance(top, _Import) and top.comma < 0 and b"," in lexeme:
                top.comma = at + lexeme.index(b",")
        elif lexeme == b"(":
            regex_ok, condition = True, last in _CONDITION
            open_.append(_Import(token.end()) if import_word else b"(k" if condition else b"(")
        elif lexeme == b"[":
            regex_ok = True
            open_.append(b"[")
        elif lexeme == b"{":
            regex_ok = True
            expression = last in _BEFORE_EXPRESSION and last not in _BLOCK_AFTER_WORD
            expression |= last[-1:] in b",:=?([!&|+-*%<>~^" and last not in (b"", b"=>")
            open_.append(b"{e" if expression else b"{")
        else:  # a closing bracket
            if top is None:
                return None
            open_.pop()
            if isinstance(top, _Import):
                if lexeme != b")":
                    return None
                end = top.comma if top.comma >= 0 else at
                if top.tokens > 1 or (top.tokens == 1 and not top.literal):
                    pending = (top.start, end)
                regex_ok = False
            elif top == b"${":
                if lexeme != b"}":
                    return None
                token = _TEMPLATE_REST.match(script, token.end())
                if token is None:
                    return None
                regex_ok = token.group(1) == b"${"
                if regex_ok:
                    open_.append(b"${")
            elif top[:1] != {b")": b"(", b"]": b"[", b"}": b"{"}[lexeme]:
                return None
            else:  # after "if (a)" or a block's "}" a "/" starts a regular expression
                regex_ok = top in (b"(k", b"{")
        import_word = False
        last = lexeme
        at = token.end()
    if open_:
        return None
    return points if pending is None else [*points, pending]


def hook_dynamic_imports(script: bytes) -> bytes:
    """``script`` (JavaScript) with each ``import(expression)`` whose specifier is not a
    plain string given to :data:`IMPORT_HOOK` first, as the module docstring says."""
    if _CANDIDATE.search(script) is None:
        return script
    points = _hook_points(script)
    if not points:
        return script
    # Pure insertions (a call's may hold another's): at the same place, a ")" comes first.
    inserts = sorted([(s, 1, _HOOK) for s, _ in points] + [(e, 0, b")") for _, e in points])
    out: list[bytes] = []
    copied = 0
    for position, _order, text in inserts:
        out += [script[copied:position], text]
        copied = position
    return b"".join(out) + script[copied:]
