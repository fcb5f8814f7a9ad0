"""A computed ``import()`` specifier is given to the page script's function first, only
where a simple scan can tell the argument, and in linear time on a hostile script."""

from __future__ import annotations

import time

from archiver_app.replay.dynamic_import import hook_dynamic_imports

HOOK = b"(globalThis.__archiverImport||String)("


def test_computed_specifiers_are_hooked_and_everything_else_is_left_alone() -> None:
    hooked = {
        b"import(cdn + '/x.js').then(f)": b"import(" + HOOK + b"cdn + '/x.js')).then(f)",
        b"import(u, {with: {type: 'json'}})": b"import(" + HOOK + b"u), {with: {type: 'json'}})",
        b"x.then(() => import( f(a, [b, c]) ))": b"x.then(() => import(" + HOOK
        + b" f(a, [b, c]) )))",
        b"import('a\\'b' + x /* ) */)": b"import(" + HOOK + b"'a\\'b' + x /* ) */))",
        b'new Function("u", "return import(u)")': b'new Function("u", "return import('
        + HOOK + b'u))")',
        b"import(`${cdn}/${`v${n}`}/x.js`, o)": b"import(" + HOOK
        + b"`${cdn}/${`v${n}`}/x.js`), o)",
    }  # fmt: skip
    for script, expected in hooked.items():
        assert hook_dynamic_imports(script) == expected, script
    untouched = [
        b"import('./x.js'); import(\"https://a.example/x.js\")",  # strings: prefixed as text
        b"lib.import(x); my_import(x); $import(x)",
        b"class A { import(a, b) { return a } }; o = { async import(x) {} }",  # methods
        b"import(`./$x.js`); import(a / b); import(`${a`); import()",  # cannot be told simply
        b"s = 'import(' + x + ')'",
    ]
    for script in untouched:
        assert hook_dynamic_imports(script) == script, script


def test_hooking_a_hostile_script_takes_linear_time() -> None:
    """Arguments never closed, comments and strings never ended, cost one pass."""
    times = []
    for n in (20_000, 80_000):
        scripts = [
            b"import(" * n + b")" * n,
            b"import((" * n,
            b"import(/*" * n,
            b"import('" * n,
            b"import(`" * n,
            b"import(`${" * n,
            b"import(`${}" * n,
            b"import(a/" * n,
        ]
        started = time.perf_counter()
        for script in scripts:
            hook_dynamic_imports(script)
        times.append(time.perf_counter() - started)
    assert times[1] < 10 * max(times[0], 0.002), times  # 4x the input: not 16x the time
