"""One way to make a file durable: no module but ``durable`` renames, fsyncs or invents a
temporary name, so a second implementation cannot come back unnoticed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import archiver_app

PACKAGE = Path(archiver_app.__file__).parent
DURABLE = PACKAGE / "durable.py"

#: ``module.function`` calls only ``durable`` may make.
FORBIDDEN_CALLS = {
    "os.replace",
    "os.rename",
    "os.renames",
    "os.fsync",
    "os.fdatasync",
    "os.sync",
    "shutil.move",
}
#: Attributes only ``durable`` may reach (``libc.syncfs`` through ctypes).
FORBIDDEN_ATTRIBUTES = {"syncfs", "fsync", "fdatasync"}
#: Temporary-name patterns of the helpers ``durable`` replaced.
OLD_TEMP_NAMES = re.compile(r"\.(partial|salvage|regzip|archiver-part|tmp)(-|\*|$)")


def _names_a_temporary(value: object) -> bool:
    """A string that is a file name or pattern (no spaces: not prose, not a docstring;
    not a module path) with an old temporary-name ending."""
    return (
        isinstance(value, str)
        and not any(c.isspace() for c in value)
        and not value.startswith("archiver_app.")
        and OLD_TEMP_NAMES.search(value) is not None
    )


def _offences(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            name = ast.unparse(func)
            if name in FORBIDDEN_CALLS:
                found.append(f"{where} calls {name}")
            # Path.replace(target) / Path.rename(target); str.replace takes two arguments
            # and datetime.replace keywords
            elif func.attr in {"replace", "rename"} and len(node.args) == 1 and not node.keywords:
                found.append(f"{where} calls .{func.attr}(one argument): a rename")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            if ast.unparse(node) not in {f"os.{node.attr}"}:  # os.fsync is counted above
                found.append(f"{where} reaches {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and _names_a_temporary(node.value):
            found.append(f"{where} spells a temporary name {node.value!r}")
    return found


def test_only_durable_renames_syncs_or_names_temporaries() -> None:
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != DURABLE:
            offences += _offences(path)
    assert offences == []


def test_the_check_sees_each_kind_of_offence(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    code = (
        "import os, shutil\n"
        "os.replace(a, b)\n"
        "Path(a).rename(b)\n"
        "libc.syncfs(fd)\n"
        "tmp = name + '.partial'\n"
        "ok = text.replace('a', 'b')\n"
        "ok = when.replace(tzinfo=None)\n"
    )
    sample.write_text(code, encoding="utf-8")
    kinds = [o.split(" ", 1)[1] for o in _offences(sample, tmp_path)]
    assert kinds == [
        "calls os.replace",
        "calls .rename(one argument): a rename",
        "reaches libc.syncfs",
        "spells a temporary name '.partial'",
    ]


def test_the_drive_marker_and_the_sidecar_are_named_once() -> None:
    """``gui/`` is left out while its library data module is being rewritten (it spells the
    marker itself; it should import ``mirror.mounts.MARKER_NAME``)."""
    for literal, owner in (
        (".archiver-destination.json", "mirror/mounts.py"),
        ("index.json", "layout/sidecar.py"),
    ):
        spelled = []
        for path in sorted(PACKAGE.rglob("*.py")):
            if "gui" in path.relative_to(PACKAGE).parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value == literal:
                    spelled.append(path.relative_to(PACKAGE).as_posix())
        assert spelled == [owner], literal
