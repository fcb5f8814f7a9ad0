"""The code keeps its shape: no module over 600 lines, no function over 80 without a reason.

A function may run past 80 lines only when it says why, in a comment that starts with
``# Long:`` either in the comment lines right above its ``def`` (above its decorators, if
any) or at the top of its body (after the signature, before the docstring).
A function's length is counted from its ``def`` line to its last line, nested functions
included.

Not checked at all: ``store/migrations/`` (Alembic revisions: one generated function per
revision).

``KNOWN_OFFENDERS`` lists what elsewhere is still too long today. Entries are removed as
they are fixed, and the test fails when a listed entry is no longer an offender, so the
list only shrinks.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import archiver_app

PACKAGE = Path(archiver_app.__file__).parent
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MARK = "# Long:"

#: Migrations are written once and never edited: their length says nothing.
EXCLUDED = ("store/migrations/",)

#: (module path under archiver_app/, function name or None for the whole module) of what
#: is still too long. Entries are removed as they are fixed (the test fails while a fixed
#: one is still listed); nothing is ever added here.
KNOWN_OFFENDERS: frozenset[tuple[str, str | None]] = frozenset()


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(EXCLUDED):
            out.append((rel, path))
    return out


def _explained(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``# Long:`` comment in the block right above the def (or its decorators), or
    between the def line and the first statement of its body."""
    top = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1  # 0-based
    i = top - 1
    while i >= 0 and lines[i].strip().startswith("#"):
        if lines[i].strip().startswith(MARK):
            return True
        i -= 1
    first_statement = node.body[0].lineno - 1  # the docstring, if it has one
    return any(line.strip().startswith(MARK) for line in lines[node.lineno : first_statement])


@functools.cache  # the same files within one run: read and parsed once
def offenders() -> frozenset[tuple[str, str | None]]:
    found: set[tuple[str, str | None]] = set()
    for rel, path in _modules():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        if len(lines) > MAX_MODULE_LINES:
            found.add((rel, None))
        for node in ast.walk(ast.parse(source, filename=rel)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assert node.end_lineno is not None
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES and not _explained(
                lines, node
            ):
                found.add((rel, node.name))
    return frozenset(found)


Offender = tuple[str, str | None]


def problems(found: set[Offender], known: frozenset[Offender]) -> list[str]:
    """What is wrong with the code's shape given the allowlist ``known``: new offenders,
    and listed entries that are offenders no more (to be removed from the list)."""
    out = []
    if new := found - known:
        out.append(
            f"over {MAX_MODULE_LINES} lines (module: None) or {MAX_FUNCTION_LINES} lines "
            f"(function) with no '{MARK}' comment saying why: {sorted(new, key=str)}"
        )
    if fixed := known - found:
        out.append(f"no longer too long: remove from KNOWN_OFFENDERS: {sorted(fixed, key=str)}")
    return out


def test_modules_and_functions_keep_their_size() -> None:
    assert problems(offenders(), KNOWN_OFFENDERS) == []


def test_the_allowlist_only_shrinks() -> None:
    found = offenders() | {("crawl/queue.py", "enqueue_links")}  # as if it were too long
    assert problems(found, KNOWN_OFFENDERS) != []  # a new offender fails
    listed = KNOWN_OFFENDERS | {("crawl/queue.py", "enqueue_links")}
    assert problems(found, listed) == []  # listed: tolerated while it is one
    [fixed] = problems(offenders(), listed)  # fixed but still listed: fails too
    assert "remove from KNOWN_OFFENDERS" in fixed and "enqueue_links" in fixed


def test_the_check_sees_a_long_function_and_its_reason(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    bare = f"def f() -> None:\n{body}\n"
    above = f"# Long: one table of constants\ndef f() -> None:\n{body}\n"
    inside = f"def f() -> None:\n    # Long: one table of constants\n{body}\n"
    elsewhere = f"# Long: not about f\n\nx = 1\ndef f() -> None:\n{body}\n"
    for text, ok in ((bare, False), (above, True), (inside, True), (elsewhere, False)):
        lines = text.splitlines()
        [node] = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
        assert _explained(lines, node) is ok, text[:60]
