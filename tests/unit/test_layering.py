"""Only archiver_app.gui may import PySide6, and importing anything has no side effects."""

from __future__ import annotations

import os
import pkgutil
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
