"""Only archiver_app.gui may import PySide6, and importing anything has no side effects."""

from __future__ import annotations

import ast
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import archiver_app

ROOT = Path(__file__).resolve().parents[2]


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(archiver_app.__path__, "archiver_app."):
        if info.name.startswith("archiver_app.gui") or ".migrations" in info.name:
            continue
        if info.name == "archiver_app.__main__":
            continue
        names.append(info.name)
    return names


def test_core_packages_exist() -> None:
    names = core_modules()
    for pkg in ("store", "warc", "capture", "replay", "layout", "mirror", "tasks", "commands"):
        assert f"archiver_app.{pkg}" in names


def test_core_never_imports_qt_and_import_has_no_side_effects(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code = (
        "import importlib, sys\n"
        f"for name in {core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))\n"
        "assert not leaked, leaked\n"
        "print('ok')\n"
    )
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    created = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert created == [Path("home")], f"import created files: {created}"


def test_cli_parser_builds_without_qt() -> None:
    code = (
        "import sys\n"
        "from archiver_app.cli import build_parser\n"
        "build_parser().parse_args(['info'])\n"
        "assert 'PySide6' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_no_qt_import_statement_outside_gui_even_inside_functions() -> None:
    """A lazy ``import PySide6`` in a function escapes the sys.modules check above."""
    import re

    pattern = re.compile(r"^\s*(from|import)\s+(PySide6|shiboken6)\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "archiver_app").rglob("*.py")
        if "gui" not in path.relative_to(ROOT / "archiver_app").parts[:1]
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


#: SQL in a string literal: the statement shapes, in capitals as SQL is written here (prose
#: such as "select a capture from the list" is not SQL).
SQL_TEXT = re.compile(
    r"\bSELECT\s+[\w*.,()\s]+?\s+FROM\s+\w|\bINSERT\s+(OR\s+\w+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|\bCREATE\s+(TABLE|INDEX|VIRTUAL)\b"
    r"|\bPRAGMA\s+\w|\bMATCH\s+:"
)
#: The database layers, and the core packages whose work the GUI reaches through the
#: managers of ``archiver_app.api`` (``lib.jobs``, ``lib.imports``, ``lib.exports`` ...).
FORBIDDEN_IN_GUI = (
    "sqlalchemy",
    "archiver_app.store",
    "sqlite3",
    "archiver_app.jobs",
    "archiver_app.mirror",
    "archiver_app.importers",
    "archiver_app.export",
    "archiver_app.crawl",
    "archiver_app.layout",
)
#: The Library's database handles: the GUI asks its managers instead.
DATABASE_HANDLES = {"engine", "session", "sessionmaker", "raw_connection"}


def gui_layering_offences(root: Path) -> list[str]:
    """Imports of the database layers and SQL text in ``root``'s modules (their AST, so an
    import inside a function or a relative import counts too)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        package = ".".join(("archiver_app", *rel.with_suffix("").parts[:-1]))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from ..store import models
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for name in names:
                if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_GUI):
                    found.append(f"{rel}:{node.lineno}: imports {name}")
                    break
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and SQL_TEXT.search(node.value)
            ):
                found.append(f"{rel}:{node.lineno}: SQL text {node.value[:60]!r}")
            if isinstance(node, ast.Attribute) and node.attr in DATABASE_HANDLES:
                found.append(f"{rel}:{node.lineno}: uses .{node.attr}")
    return sorted(set(found))


def test_gui_calls_the_application_api_not_the_database() -> None:
    """``gui/`` reads and writes through ``archiver_app.api`` (the managers on ``Library``),
    never SQLAlchemy, ``store``, the library's engine or SQL of its own: one core, not two."""
    assert gui_layering_offences(ROOT / "archiver_app" / "gui") == []


def test_the_gui_layering_check_finds_each_kind_of_offence(tmp_path: Path) -> None:
    gui = tmp_path / "gui"
    (gui / "sub").mkdir(parents=True)
    (gui / "a.py").write_text("def f():\n    from sqlalchemy import text\n")
    (gui / "b.py").write_text("import archiver_app.store.models\n")
    (gui / "sub" / "c.py").write_text("from ...store.models import Snapshot\n")
    (gui / "d.py").write_text('Q = """SELECT s.id, count(*)\n  FROM snapshots s"""\n')
    (gui / "e.py").write_text("X = 'DELETE FROM tags'\nY = f'UPDATE files SET x = {1}'\n")
    (gui / "f.py").write_text("def f(lib):\n    return lib.engine.connect()\n")
    (gui / "g.py").write_text("def f():\n    from archiver_app.jobs.background import run\n")
    (gui / "h.py").write_text("from archiver_app import mirror\n")
    (gui / "sub" / "i.py").write_text("from ...export import Selection\n")
    (gui / "ok.py").write_text(
        "'''Select a capture from the list: SELECT id ... ORDER BY streams.'''\n"
        "from archiver_app import api\n"
    )
    found = gui_layering_offences(gui)
    assert [f.split(":")[0] for f in found] == [
        "gui/a.py",
        "gui/b.py",
        "gui/d.py",
        "gui/e.py",
        "gui/e.py",
        "gui/f.py",
        "gui/g.py",
        "gui/h.py",
        "gui/sub/c.py",
        "gui/sub/i.py",
    ], found
