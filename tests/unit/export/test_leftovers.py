"""An export killed with SIGKILL leaves a hidden temporary file beside its destination (GBs
on a real export); the next export to that destination removes it, and says so. Only its
own destination's, and only those whose writer process is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from archiver_app.cli import main
from archiver_app.durable import is_temp, open_temp
from archiver_app.importers.run import import_paths
from archiver_app.library import Library
from tests.helpers.warcs import site, write_warc

#: A child that starts writing a temporary file for ``out/k.wacz`` as an export does
#: (durable's temporary name, with its pid), says so, and waits to be killed.
CHILD = """
import os, sys, time
from archiver_app.durable import open_temp
temp, fd = open_temp(sys.argv[1], sys.argv[2])
os.write(fd, b"PK" + b"half an export" * 1000)
print(temp, flush=True)
time.sleep(120)
"""


def _killed_writer(folder: Path, label: str) -> Path:
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), label],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[3],
    ) as child:
        try:
            assert child.stdout is not None
            temp = Path(child.stdout.readline().strip())
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    assert temp.exists() and is_temp(temp.name)
    return temp


def test_an_export_removes_what_a_killed_export_to_the_same_place_left(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import_paths(library, [write_warc(tmp_path / "in.warc.gz", site(2))])
    out = tmp_path / "out"
    out.mkdir()
    killed = _killed_writer(out, "k.wacz")
    other_name = _killed_writer(out, "other.wacz")  # another destination's: not ours
    live, fd = open_temp(out, "k.wacz")  # a writer still running (this process)
    os.close(fd)

    code = main(["--library", str(library.root), "export", "-o", str(out / "k.wacz")])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert not killed.exists()
    assert f"removed 1 temporary file a killed export had left: {killed.name}" in printed
    assert other_name.exists() and Path(live).exists()
    with zipfile.ZipFile(out / "k.wacz") as zf:
        assert zf.testzip() is None
