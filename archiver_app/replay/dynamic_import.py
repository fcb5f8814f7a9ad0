"""Give a script's ``import(specifier)`` to a function first, for a specifier it computes.

``import()`` is syntax: no page script can wrap it, and the module it loads is fetched in
CORS mode, which the replay view's redirect into its own scheme loses. A full address
written as a string is pointed at the archive in the text
(:func:`archiver_app.replay.rewrite.prefix_module_imports`); one the script computes
(``import(CDN + "/x.js")``) can only be changed when the script runs. So
``import(expression`` becomes ``import((globalThis.__archiverImport||String)(expression)``,
and the view's page script defines that function (a full ``http(s):`` address becomes its
archive address; anything else, a relative one included, is left as it is). Without the
function (a page of ``archiver serve``, whose scripts this never touches) the specifier is
what it was.

Only what a short, simple scan can close is changed: the first argument ends at a ``,``
or ``)`` outside brackets, strings and comments, within :data:`ARGUMENT_LIMIT` bytes,
with no ``/`` that could start a regular expression. A class or object method named
``import`` (``import(a) {``) is left alone. Each byte is scanned at most once (an
``import(`` inside a scanned argument is not hooked), so a hostile script costs linear
time.
"""

from __future__ import annotations

import re

IMPORT_HOOK = "__archiverImport"
ARGUMENT_LIMIT = 2048

_DYNAMIC_IMPORT = re.compile(rb"(?<![\w$.])import\s*\(")
_HOOK = b"(globalThis." + IMPORT_HOOK.encode() + b"||String)("
# One token of an argument: a string, a template without substitutions, a comment (each
# with its end in a group, None when it ends first at a line's end, a "$" or the limit: so
# a scan that gives up has read every byte it looked at), one bracket or separator, or a
# run of anything else.
_TEMPLATE_TEXT = rb"""(?:[^`$\\]|\\[\s\S]|\$(?!\{))*(`|\$\{)?"""
_TOKEN = re.compile(
    rb"""'(?:[^'\\\n]|\\.)*(')?|"(?:[^"\\\n]|\\.)*(")?|`""" + _TEMPLATE_TEXT
    + rb"""|/\*(?:[^*]|\*(?!/))*(\*/)?|//[^\n]*|[()\[\]{},/]|[^()\[\]{},/`'"]+"""
)  # fmt: skip
# A template's text after a substitution's "}": up to its end or its next substitution.
_TEMPLATE_REST = re.compile(_TEMPLATE_TEXT)
_SUBSTITUTION = b"${"
_OPENED = (b"'", b'"', b"`", b"/*")
_CLOSING = {b"(": b")", b"[": b"]", b"{": b"}"}
_LITERAL = re.compile(rb"""\s*(?:'[^'\\\n]*'|"[^"\\\n]*"|`(?:[^`$\\]|\$(?!\{))*`)\s*""")
_METHOD_BODY = re.compile(rb"\s*\{")


def _scan(text: bytes, start: int) -> tuple[int, int | None, int | None]:
    """From ``start`` (just after ``import(``): how far it read, where the first argument
    ends and where the call's ``)`` is (None for either when the scan gave up)."""
    limit = min(len(text), start + ARGUMENT_LIMIT)
    open_: list[bytes] = []
    argument_end: int | None = None
    at = start
    while at < limit:
        token = _TOKEN.match(text, at, limit)
        if token is None:
            return at, None, None
        lexeme, at = token.group(), token.end()
        if lexeme.startswith(_OPENED) and token.lastindex is None:  # never closed
            return at, None, None
        if lexeme.startswith(b"`") and token.group(3) == _SUBSTITUTION:
            open_.append(_SUBSTITUTION)
        elif lexeme in _CLOSING:
            open_.append(_CLOSING[lexeme])
        elif lexeme in (b")", b"]", b"}"):
            if not open_:
                if lexeme != b")":
                    return at, None, None
                return at, at - 1 if argument_end is None else argument_end, at - 1
            expected = open_.pop()
            if expected == _SUBSTITUTION and lexeme == b"}":  # back in the template's text
                rest = _TEMPLATE_REST.match(text, at, limit)
                assert rest is not None  # it matches the empty text
                at = rest.end()
                if rest.group(1) is None:
                    return at, None, None
                if rest.group(1) == _SUBSTITUTION:
                    open_.append(_SUBSTITUTION)
            elif expected != lexeme:
                return at, None, None
        elif lexeme == b"," and not open_ and argument_end is None:
            argument_end = at - 1
        elif lexeme == b"/":  # a regular expression, or a division: cannot be told here
            return at, None, None
    return at, None, None


def hook_dynamic_imports(script: bytes) -> bytes:
    """``script`` (JavaScript) with each ``import(expression)`` whose specifier is not a
    plain string given to :data:`IMPORT_HOOK` first, as the module docstring says."""
    if b"import" not in script:
        return script
    out: list[bytes] = []
    copied = searched = 0
    while (found := _DYNAMIC_IMPORT.search(script, searched)) is not None:
        start = found.end()
        searched, argument_end, close = _scan(script, start)
        if argument_end is None or close is None:
            continue
        argument = script[start:argument_end]
        if not argument.strip() or _LITERAL.fullmatch(argument):
            continue
        if _METHOD_BODY.match(script, close + 1):  # a method named import
            continue
        out += [script[copied:start], _HOOK, argument, b")"]
        copied = argument_end
    return b"".join(out) + script[copied:] if out else script
