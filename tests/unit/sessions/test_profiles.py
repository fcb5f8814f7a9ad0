"""Profiles of a library: names, make, list, delete, and the one-user-at-a-time lock."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import update

from archiver_app.commands.capture_cmd import say_if_profile_busy
from archiver_app.crawl.inline import create_capture_job
from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.profiles import ProfileNameError, profile_dir
from archiver_app.profiles.lock import ProfileBusyError, hold, in_use
from archiver_app.profiles.store import (
    ProfileNotFoundError,
    save_session_cookies,
    session_cookies,
)
from archiver_app.store.models import Job, JobStatus


def test_make_list_delete(library: Library) -> None:
    assert library.profiles.all() == []
    made = library.profiles.create("university")
    assert made.path == profile_dir(library.root, "university") and made.path.is_dir()
    assert made.created_at is not None and not made.in_use
    private = library.root / "private"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    (made.path / "stray.lock").touch()
    (library.root / "private" / "profiles" / "not a name").mkdir()
    assert library.profiles.names() == ["university"]
    library.profiles.delete("university")
    assert library.profiles.names() == [] and not made.path.exists()
    with pytest.raises(ProfileNotFoundError, match="archiver login university URL"):
        library.profiles.delete("university")
    for bad in ("../up", "", ".hidden", "a/b", "x" * 65):
        with pytest.raises(ProfileNameError):
            library.profiles.create(bad)


def test_a_profile_in_use_by_another_process_is_not_deleted_or_shared(library: Library) -> None:
    library.profiles.create("news")
    script = (
        "import sys, time; from pathlib import Path\n"
        "from archiver_app.profiles.lock import hold\n"
        "held = hold(Path(sys.argv[1]), 'news'); print('held', flush=True); sys.stdin.read()\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", script, str(library.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        assert in_use(library.root, "news") and library.profiles.get("news").in_use
        with pytest.raises(ProfileBusyError, match="in use"):
            library.profiles.delete("news")
        with pytest.raises(ProfileBusyError):
            hold(library.root, "news", wait=0.3, poll=0.05)
        # `archiver capture/crawl --profile news` says at once that it waits, and for how long
        ctx = SimpleNamespace(out=io.StringIO(), err=io.StringIO())
        say_if_profile_busy(library, "news", ctx)  # type: ignore[arg-type]
        assert ctx.err.getvalue() == (
            "waiting for profile 'news', in use by a login window or another capture:"
            " up to 5 minutes (Ctrl+C stops)\n"
        )
        # ... and names the job that holds it, when a running job captures in it
        holder = create_capture_job(library, ["http://127.0.0.1:8765/"], profile="news")
        create_capture_job(library, ["http://127.0.0.1:8765/a"], profile="news")  # queued
        with library.write() as s:
            s.execute(update(Job).where(Job.id == holder).values(status=JobStatus.RUNNING))
        assert library.profiles.jobs_using("news") == [holder]
        ctx.err = io.StringIO()
        say_if_profile_busy(library, "news", ctx)  # type: ignore[arg-type]
        assert ctx.err.getvalue().startswith(f"waiting for profile 'news', in use by job {holder}:")
        ctx.err = io.StringIO()
        say_if_profile_busy(library, "news", ctx, own_job=holder)  # type: ignore[arg-type]
        assert "in use by a login window or another capture" in ctx.err.getvalue()
        ctx.err = io.StringIO()
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(10)
        assert other.stdout is not None
        other.stdout.close()
    # the holder is gone: the lock went with it
    hold(library.root, "news", wait=5).close()
    say_if_profile_busy(library, "news", ctx)  # type: ignore[arg-type]  # free: nothing said
    assert ctx.err.getvalue() == ""
    library.profiles.delete("news", force=True)  # its two jobs above never ran


def test_session_cookies_are_kept_beside_the_profile(library: Library) -> None:
    library.profiles.create("u")
    cookies = [
        {"name": "sid", "value": "1", "domain": "a.org", "path": "/", "expires": -1},
        {"name": "keep", "value": "2", "domain": "a.org", "path": "/", "expires": 2e9},
    ]
    assert save_session_cookies(library.root, "u", cookies) == 1
    assert session_cookies(library.root, "u") == cookies[:1]
    (Path(library.root) / "private/profiles/u/archiver-session-cookies.json").write_text("{")
    assert session_cookies(library.root, "u") == []


def test_a_profile_a_queued_or_running_job_captures_in_is_not_deleted(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from archiver_app.cli import main

    library.profiles.create("news")
    queued = create_capture_job(library, ["http://127.0.0.1:8765/a"], profile="news")
    create_capture_job(library, ["http://127.0.0.1:8765/b"])  # no profile: not in the way
    root = ["--library", str(library.root)]
    assert main([*root, "profiles", "delete", "news"]) == 2
    err = capsys.readouterr().err
    assert f"profile 'news' is used by job {queued} (capture, queued)" in err
    assert f"archiver job abort {queued}" in err and "--force" in err
    with library.write() as s:
        s.execute(update(Job).where(Job.id == queued).values(status=JobStatus.RUNNING))
    with pytest.raises(InputError, match=rf"job {queued} \(capture, running\)"):
        library.profiles.delete("news")
    assert library.profiles.names() == ["news"]
    with library.write() as s:
        s.execute(update(Job).where(Job.id == queued).values(status=JobStatus.COMPLETED))
    library.profiles.delete("news")  # the job is done with it
    assert library.profiles.names() == []

    library.profiles.create("uni")
    create_capture_job(library, ["http://127.0.0.1:8765/c"], profile="uni")
    library.profiles.delete("uni", force=True)  # asked for
    assert library.profiles.names() == []
