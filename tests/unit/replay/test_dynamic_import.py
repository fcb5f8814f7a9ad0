"""A computed ``import()`` specifier is given to the page script's function first, only
where it is a call in the code (never in a string, comment, template's text or regular
expression), the script is left whole when it cannot be read, and in linear time."""

from __future__ import annotations

import time
from typing import Any

from archiver_app.replay.dynamic_import import hook_dynamic_imports

HOOK = b"(globalThis.__archiverImport||(s=>s))("


def test_computed_specifiers_in_the_code_are_hooked() -> None:
    hooked = {
        b"import(cdn + '/x.js').then(f)": b"import(" + HOOK + b"cdn + '/x.js')).then(f)",
        b"import(u, {with: {type: 'json'}})": b"import(" + HOOK + b"u), {with: {type: 'json'}})",
        b"x.then(() => import( f(a, [b, c]) ))": b"x.then(() => import(" + HOOK
        + b" f(a, [b, c]) )))",
        b"import('a\\'b' + x /* ) */)": b"import(" + HOOK + b"'a\\'b' + x /* ) */))",
        b"import(`${cdn}/${`v${n}`}/x.js`, o)": b"import(" + HOOK
        + b"`${cdn}/${`v${n}`}/x.js`), o)",
        b"x = a / import(b) / c": b"x = a / import(" + HOOK + b"b)) / c",  # divisions
        b"import /* c */ (u)": b"import /* c */ (" + HOOK + b"u))",
        b"t = `${ {a: import(u)}.a }`": b"t = `${ {a: import(" + HOOK + b"u))}.a }`",
        b"import(import(u))": b"import(" + HOOK + b"import(" + HOOK + b"u))))",
    }  # fmt: skip
    for script, expected in hooked.items():
        assert hook_dynamic_imports(script) == expected, script


def test_valid_javascript_that_only_looks_like_import_is_left_alone() -> None:
    untouched = [
        b"import('./x.js'); import(\"https://a.example/x.js\"); import(`./x.js`)",  # strings
        b"lib.import(x); a?.import(x); my_import(x); $import(x); import.meta.url",
        b"class A { import(a, b) { return a } }; o = { async import(x) {} }",  # methods
        b"s = 'import(' + x + ')'; t = \"it's import(u)\"; u = 'a\\' import(u)'",
        b"// import(u)\n/* import(u) */ t = `import(${u})`; r = /import(u)/g",
        b"if (a) /import(u)/.test(s); x = {}\n{ }\n/import(u)/.exec(s)",  # regexes
        b'new Function("u", "return import(u)")',  # a string: code only if the page says so
        b"import()",
    ]
    for script in untouched:
        assert hook_dynamic_imports(script) == script, script


def test_a_script_that_cannot_be_read_is_left_whole() -> None:
    """A reading gone wrong could put the hook in a string or split it across one."""
    for broken in (b"'", b"`${a`", b"/* a", b"(", b")", b"(]", b"x = (/[/"):
        script = b"import(u); " + broken + b" import(v)"
        assert hook_dynamic_imports(script) == script, script


def test_hooking_a_hostile_script_takes_linear_time() -> None:
    """Deep nesting, never-closed strings, comments, templates and regular expressions,
    and hook after hook each cost one pass over the script."""
    times = []
    for n in (10_000, 40_000):
        scripts = [
            b"import(" * n + b"u" + b")" * n,
            b"import(" * n,
            b"import(u)+" * n,
            b"import((" * n,
            b"import(/*" * n,
            b"import('" * n,
            b"import(`" * n,
            b"import(`${" * n,
            b"import(`${}" * n,
            b"import(a/" * n,
            b"import(u);(/" * n,
            b"`${import(u)}" * n + b"`" * n,
            b"import   " * n + b"(u)",
        ]
        started = time.perf_counter()
        for script in scripts:
            hook_dynamic_imports(script)
        times.append(time.perf_counter() - started)
    assert times[1] < 10 * max(times[0], 0.002), times  # 4x the input: not 16x the time


def test_a_script_whose_imports_are_plain_strings_is_not_read(monkeypatch: Any) -> None:
    """Most bundles load their chunks with ``import("./chunk.js")``: nothing to hook, and
    reading a large bundle token by token costs about 150 ms a megabyte each time it is
    served. Such a script is passed over without being read."""
    from archiver_app.replay import dynamic_import

    def never(script: bytes) -> None:
        raise AssertionError("read")

    monkeypatch.setattr(dynamic_import, "_hook_points", never)
    bundle = b"".join(
        b"f%d=()=>import('./chunk-%d.js');g=()=>import(\"./c%d.js\", {with:{type:'json'}});"
        b"h=()=>import(`./t%d.js`);o.import(x);a?.import(y);\n" % (i, i, i, i)
        for i in range(20_000)
    )
    assert hook_dynamic_imports(bundle) is bundle
    monkeypatch.undo()
    assert hook_dynamic_imports(bundle + b"import(cdn + x)").endswith(HOOK + b"cdn + x))")
