"""The status bar's figures (and ``archiver info``'s) on a shared library: the same counts on
PostgreSQL as on SQLite. Their count of files safe once failed on PostgreSQL 15 (a subquery
without a name), so the app's status bar said "status unavailable" and ``info`` crashed."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from archiver_app.api.status import status_figures
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.store.models import File
from tests.helpers.snapshots import add_snapshot


def test_files_safe_counts_the_drive_copies_on_both_databases(
    any_library: Library, tmp_path: Path
) -> None:
    lib = any_library
    for i in range(3):
        add_snapshot(lib, f"https://a.example/{i}", title=f"A{i}")
    with lib.session() as s:
        files = s.scalar(select(func.count()).select_from(File)) or 0
    set_policy(lib, copies=2)
    before = status_figures(lib, lib.clock())
    assert (before.files_safe, before.files_at_risk) == (0, files)

    (tmp_path / "blue").mkdir()
    add_destination(lib, tmp_path / "blue", "blue")
    assert run_mirror(lib, scan_roots=[tmp_path]).copied == files
    after = status_figures(lib, lib.clock())
    assert (after.files_safe, after.files_at_risk) == (files, 0)
    assert after.policy_copies == 2
