"""``archiver doctor``: what this machine and this library have, and what is missing."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from archiver_app import __version__
from archiver_app.capture.browser import find_browser, install_hint
from archiver_app.errors import ArchiverError
from archiver_app.library import DB_NAME, META_NAME, Library
from archiver_app.store import schema
from archiver_app.units import counted, human_bytes

LOW_DISK_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def folder_size(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def check_library(root: Path) -> list[Check]:
    checks = [Check("archiver", True, __version__)]
    if not (root / META_NAME).exists() and not (root / DB_NAME).exists():
        checks.append(Check("library", False, f"no library at {root} (archiver init creates one)"))
        return checks
    try:
        with Library.open(root, create=False) as lib:
            info = lib.info()
    except ArchiverError as exc:
        checks.append(Check("library", False, f"{root}: {exc}"))
        return checks
    checks.append(
        Check(
            "library",
            True,
            f"{root} ({human_bytes(folder_size(root))}, {counted(info.snapshots, 'snapshot')})",
        )
    )
    current = info.schema_revision or "none"
    checks.append(
        Check(
            "schema",
            info.schema_revision == info.schema_head,
            f"{current} (this version of Archiver writes {schema.head_revision()})",
        )
    )
    return checks


def check_machine(root: Path) -> list[Check]:
    checks: list[Check] = []
    browser = find_browser(with_version=True)
    if browser is None:
        checks.append(Check("browser", False, "none found. Get one with: " + install_hint()))
    else:
        checks.append(Check("browser", True, browser.describe()))

    from archiver_app.gui.probe import webengine_status

    ok, detail = webengine_status()
    checks.append(Check("qtwebengine", ok, detail))

    probe = root if root.exists() else next((p for p in root.parents if p.exists()), Path("/"))
    free = shutil.disk_usage(probe).free
    checks.append(
        Check(
            "disk",
            free >= LOW_DISK_BYTES,
            f"{human_bytes(free)} free on the library's disk"
            + ("" if free >= LOW_DISK_BYTES else " (low: captures pause below 2 GB)"),
        )
    )
    return checks


def run_doctor(root: Path) -> list[Check]:
    return check_library(root) + check_machine(root)


def report_lines(checks: list[Check]) -> list[str]:
    """``archiver doctor``'s lines, as it prints them and Help > Check Setup shows and
    copies them: one per check, then the verdict."""
    width = max((len(c.name) for c in checks), default=0)
    lines = [f"{'ok ' if c.ok else '!! '}{c.name:<{width}}  {c.detail}" for c in checks]
    problems = sum(1 for c in checks if not c.ok)
    return [*lines, f"{counted(problems, 'problem')} found" if problems else "all good"]
