"""A background worker's priority reaches the sessions its programs start (Linux)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from archiver_app.tasks.priority import descendant_sessions

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists(), reason="needs Linux with scheduler autogroups"
)

# A niced process starts a program in a session of its own (as Playwright starts the
# browser), then applies its priority; it prints the program's session priority before and
# after, and what the function returned.
SCRIPT = r"""
import os, subprocess, sys
from pathlib import Path
from archiver_app.tasks.priority import keep_started_sessions_at_my_priority
os.nice(int(sys.argv[1]))
child = subprocess.Popen(["sleep", "30"], start_new_session=True)
group = Path(f"/proc/{child.pid}/autogroup")
before = group.read_text().split()[-1]
lowered = keep_started_sessions_at_my_priority()
after = group.read_text().split()[-1]
child.kill()
print(before, after, lowered)
"""


def run(nice: int) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(nice)], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def test_a_background_worker_passes_its_priority_to_a_new_session() -> None:
    before, after, lowered = run(7)
    assert before == "0"
    assert after == "7"
    assert lowered == "1"


def test_a_foreground_process_changes_nothing() -> None:
    before, after, lowered = run(0)
    assert (before, after, lowered) == ("0", "0", "0")


def test_only_descendants_that_lead_a_session_are_found() -> None:
    own = subprocess.Popen(["sleep", "30"], start_new_session=True)
    shared = subprocess.Popen(["sleep", "30"])  # same session as this process
    try:
        found = descendant_sessions()
        assert own.pid in found
        assert shared.pid not in found
    finally:
        own.kill()
        shared.kill()
        own.wait()
        shared.wait()
