"""A profile's browser inside one long-lived Capturer (a worker): started for a page, let go
when idle (so ``archiver login`` can use the profile again), started again when needed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from archiver_app.capture import engine
from archiver_app.capture.engine import Capturer
from archiver_app.library import Library
from archiver_app.profiles.lock import in_use
from tests.integration.sessions.site import LoginSite
from tests.integration.sessions.test_logins import write_cookies_txt


def test_an_idle_profile_browser_lets_the_profile_go(
    library: Library, login_site: LoginSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cookies = tmp_path / "cookies.txt"
    write_cookies_txt(login_site, cookies)
    library.profiles.import_cookies("uni", cookies)
    monkeypatch.setattr(engine, "PROFILE_IDLE_SECONDS", 0.5)

    async def run() -> None:
        async with Capturer(library) as cap:
            first = await cap.capture(login_site.url("/private"), profile="uni")
            assert first.ok, first.error
            assert in_use(library.root, "uni")  # kept for the next page of the job
            deadline = time.monotonic() + 30
            while in_use(library.root, "uni"):
                assert time.monotonic() < deadline, "the idle profile browser was not closed"
                await asyncio.sleep(0.1)
            again = await cap.capture(login_site.url("/members"), profile="uni")
            assert again.ok, again.error  # started again, session cookies given back
        assert not in_use(library.root, "uni")

    asyncio.run(run())
