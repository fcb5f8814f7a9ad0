"""Core functions run in a child process: result, progress, errors, cancel, death."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from archiver_app.errors import ArchiverError, InputError
from archiver_app.library import Library
from archiver_app.tasks import Cancelled, CancelToken, ProgressUpdate
from archiver_app.tasks.isolated import child_main, library_ref, probe, run_isolated
from tests.helpers import isolated_targets as targets
from tests.helpers.factories import bulk_snapshots


def test_result_and_progress_come_back_from_a_lower_priority_child(library: Library) -> None:
    bulk_snapshots(library, 7)
    updates: list[ProgressUpdate] = []
    result = run_isolated(targets.count_to, library, 500, label="counting", progress=updates.append)
    assert result["root"] == str(library.root) and result["snapshots"] == 7  # same library
    assert result["pid"] != os.getpid() and result["n"] == 500
    if hasattr(os, "nice"):
        assert result["nice"] >= os.nice(0) + 5
    assert updates and updates[-1].done == 500 and updates[-1].message == "counting"
    assert len(updates) < 50  # throttled in the child, not one message per update


def test_errors_come_back_as_what_was_raised_with_the_childs_traceback(library: Library) -> None:
    with pytest.raises(InputError) as info:
        run_isolated(targets.refuse, library)
    assert str(info.value) == "That address is not a web page."
    assert info.value.details == "ftp://example.org/"
    assert any("isolated_targets.py" in note for note in info.value.__notes__)
    with pytest.raises(ArchiverError, match="Odd: odd 1 2"):  # not picklable: described
        run_isolated(targets.raise_odd, library)


def test_only_a_function_the_child_can_import_is_accepted(library: Library) -> None:
    def local(library: Library, **_: object) -> None: ...

    for target in (local, lambda library, **_: None):
        with pytest.raises(TypeError, match="module-level function"):
            run_isolated(target, library)


def test_a_child_that_dies_is_an_error_not_a_result(library: Library) -> None:
    with pytest.raises(ArchiverError, match="stopped before it finished") as info:
        run_isolated(targets.die, library)
    assert "exit code 7" in (info.value.details or "")


def test_cancel_reaches_the_child_which_stops_at_its_next_check(
    library: Library, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    cancel = CancelToken()
    import threading

    def cancel_once_started() -> None:
        while not marker.exists():
            time.sleep(0.02)
        cancel.cancel()

    threading.Thread(target=cancel_once_started, daemon=True).start()
    with pytest.raises(Cancelled):
        run_isolated(targets.until_cancelled, library, str(marker), cancel=cancel)
    assert marker.read_text() == "cancelled"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
@pytest.mark.parametrize("target", ["until_cancelled", "report_once_the_app_is_gone"])
def test_the_child_cancels_itself_when_the_app_is_killed(
    library: Library, tmp_path: Path, target: str
) -> None:
    """Waiting, or reporting progress: an import's progress to an app that had quit raised
    "Broken pipe", and its job read "completed, 1 failed: Broken pipe"."""
    marker = tmp_path / "marker"
    root = Path(__file__).resolve().parents[3]
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(root)!r})
        from archiver_app.library import Library
        from archiver_app.tasks.isolated import run_isolated
        from tests.helpers import isolated_targets
        if __name__ == "__main__":
            lib = Library.open({str(library.root)!r}, create=False)
            run_isolated(isolated_targets.{target}, lib, {str(marker)!r})
        """
    )
    script = tmp_path / "app.py"
    script.write_text(code)
    app = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline, "the child never started"
            assert app.poll() is None, "the app ended early"
            time.sleep(0.05)
        os.kill(app.pid, signal.SIGKILL)
        app.wait(10)
        deadline = time.monotonic() + 30
        while marker.read_text() in ("started", ""):
            assert time.monotonic() < deadline, "the orphaned child kept running"
            time.sleep(0.05)
        assert marker.read_text() == "cancelled"
    finally:
        if app.poll() is None:
            app.kill()


@pytest.mark.skipif(os.name != "posix", reason="the resource tracker is Unix-only")
def test_prepare_starts_what_the_first_child_needs_and_is_cheap_to_repeat() -> None:
    from multiprocessing import resource_tracker

    from archiver_app.tasks.isolated import prepare

    prepare()
    first = resource_tracker._resource_tracker._pid
    assert first is not None  # running: the first child does not start it
    prepare()
    assert resource_tracker._resource_tracker._pid == first


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0, reason="root on Linux"
)
def test_programs_the_child_starts_cannot_outrank_the_app(library: Library) -> None:
    # Chromium raises its own priority when it may (as root); started from a background
    # process it must stay below the app's window.
    assert run_isolated(targets.started_program_may_raise_priority, library) is False


@pytest.fixture
def as_the_app() -> Iterator[None]:
    """This process as the app's is once its window is up: automatic collection off, the
    objects that exist set aside (``gui/collector.py``)."""
    was = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_a_child_of_the_app_collects_cycles_as_python_does(
    library: Library, as_the_app: None
) -> None:
    assert run_isolated(targets.collector_state, library) is True
    assert run_isolated(probe, library)["collects"] is True  # what the app's self-test reads


@pytest.mark.skipif(sys.platform != "linux", reason="fork is Linux's default start method only")
def test_a_child_forked_from_the_app_collects_cycles_too(
    library: Library, as_the_app: None
) -> None:
    """A forked child inherits the app's switch-off; the child's side turns it back on."""
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=True)
    root, url = library_ref(library)
    args = (theirs, targets.collector_state, root, url, (), {}, 0)
    child = ctx.Process(target=child_main, args=args)
    child.start()
    theirs.close()
    try:
        assert ours.poll(60)
        assert ours.recv() == ("result", True)
    finally:
        ours.close()
        child.join(30)
        if child.is_alive():
            child.kill()
            child.join()
