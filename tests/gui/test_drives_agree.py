"""The drives panel and ``archiver drives`` show the same figures: one source, policy-aware.

A retention policy that allows only drive "blue" once made the panel report every file as
missing on drive "red" while the CLI reported none: the panel counted copies itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from archiver_app.gui.drives_panel import DrivesPanel
from archiver_app.gui.ops import OpRunner
from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.store.models import File
from tests.helpers.snapshots import add_snapshot

ARCHIVER = Path(sys.executable).with_name("archiver")
CLI_ROW = re.compile(
    r"^(?P<label>\w+): .*\n\s+(?P<present>\d+) present, (?P<missing>\d+) not here, "
    r"(?P<corrupted>\d+) corrupted;",
    re.MULTILINE,
)


def cli_figures(library: Library) -> dict[str, tuple[int, int, int]]:
    result = subprocess.run(
        [str(ARCHIVER), "--library", str(library.root), "drives"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return {
        m["label"]: (int(m["present"]), int(m["missing"]), int(m["corrupted"]))
        for m in CLI_ROW.finditer(result.stdout)
    }


def test_drives_panel_and_cli_agree_under_a_policy_that_leaves_a_drive_out(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    for i in range(3):
        add_snapshot(library, f"https://a.example/{i}", title=f"A{i}")
    with library.session() as s:
        files = s.scalar(select(func.count()).select_from(File)) or 0
    assert files >= 6
    for label in ("blue", "red"):
        (tmp_path / label).mkdir()
        add_destination(library, tmp_path / label, label)
    set_policy(library, destinations=["blue"])
    assert run_mirror(library, scan_roots=[tmp_path]).copied == files

    panel = DrivesPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.timer.stop()
    panel.auto_mirror = False
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=10_000)
    shown = {
        panel.model.data(panel.model.index(row, 0), 0): tuple(
            int(panel.model.data(panel.model.index(row, col), 0).replace(",", ""))
            for col in (3, 4, 5)  # Present, Not here, Corrupted
        )
        for row in range(2)
    }
    expected = {"blue": (files, 0, 0), "red": (0, 0, 0)}  # red is not the policy's
    assert shown == expected
    assert cli_figures(library) == expected


def test_an_unplugged_drive_shows_no_free_space_in_either(
    qtbot: QtBot, library: Library, op_runner: OpRunner, tmp_path: Path
) -> None:
    """The panel showed an unplugged drive's free space as last seen ("63.8 GB of 270.6
    GB") while ``archiver drives`` said "red: absent": the space now is not known."""
    for label in ("blue", "red"):
        (tmp_path / label).mkdir()
        add_destination(library, tmp_path / label, label)
    (tmp_path / "red").rename(tmp_path / "red.pulled")
    panel = DrivesPanel(library, op_runner)
    qtbot.addWidget(panel)
    panel.timer.stop()
    panel.auto_mirror = False
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=10_000)
    free = {
        panel.model.data(panel.model.index(row, 0), 0): panel.model.data(
            panel.model.index(row, 2), 0
        )
        for row in range(2)
    }
    out = subprocess.run(
        [str(ARCHIVER), "--library", str(library.root), "drives"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert free["red"] == "" and "\nred: absent\n" in out
    blue = re.search(r"^blue: .*, (\S+ \wB) free of (\S+ \wB)$", out, re.MULTILINE)
    assert blue is not None, out
    assert free["blue"].endswith(f" of {blue[2]}")  # the same drive size in both
