"""Jobs with a browser profile: the profile is part of the job, must exist, keeps crawls off
log-out links, and a page that meets a login form is not tried again."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import pytest

from archiver_app.cli import main
from archiver_app.crawl.api import job_detail, page_list
from archiver_app.crawl.fetcher import FetchResult
from archiver_app.crawl.inline import run_job_inline
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library
from archiver_app.profiles.store import ProfileNotFoundError
from archiver_app.tasks import CancelToken


def test_crawl_and_watch_jobs_record_their_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    lib_args = ["--library", str(root)]
    assert (
        main([*lib_args, "crawl", "https://forum.example.org/", "--profile", "u", "--queue"]) == 2
    )
    assert "there is no profile 'u'" in capsys.readouterr().err
    with Library.open(root, create=True) as lib:
        lib.profiles.create("u")
    assert (
        main([*lib_args, "crawl", "https://forum.example.org/", "--profile", "u", "--queue"]) == 0
    )
    assert main([*lib_args, "watch", "add", "https://forum.example.org/n", "--profile", "u"]) == 0
    capsys.readouterr()
    assert main([*lib_args, "job", "show", "1"]) == 0
    assert "profile:   u\n" in capsys.readouterr().out
    with Library.open(root) as lib:
        crawl, watch = job_detail(lib, 1), job_detail(lib, 2)
        assert crawl.spec.profile == watch.spec.profile == "u"
        matcher = crawl.rules.matcher
        assert matcher.ignored_by("https://forum.example.org/user/logout?token=1")
        assert matcher.ignored_by("https://forum.example.org/sign-out")
        assert not matcher.ignored_by("https://forum.example.org/t/logging-out-of-habits")
        with pytest.raises(ProfileNotFoundError):
            create_job(lib, ["https://forum.example.org/"], profile="missing")
    # the watch captures in it: deleting the profile is refused unless forced
    assert main([*lib_args, "profiles", "delete", "u"]) == 2
    err = capsys.readouterr().err
    assert "profile 'u' is used by watch 2: each of its captures would fail" in err
    assert "archiver watch remove 2" in err
    assert main([*lib_args, "profiles", "delete", "u", "--force"]) == 0
    assert "deleted profile 'u'" in capsys.readouterr().out


class _LoginForms:
    """A fetcher whose every page lands on a login form."""

    def __init__(self) -> None:
        self.fetched: list[str] = []

    async def __aenter__(self) -> _LoginForms:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    async def fetch(
        self,
        url: str,
        *,
        job_id: int,
        collection: str,
        tags: tuple[str, ...],
        rules: Rules,
        cancel: CancelToken,
        profile: str | None = None,
    ) -> FetchResult:
        self.fetched.append(url)
        return FetchResult(
            url, f"{url}login", False, 200, error="session expired", login="session_expired"
        )


def test_a_login_form_is_not_tried_again(library: Library) -> None:
    library.profiles.create("u")
    job_id = create_job(
        library, ["https://forum.example.org/"], rules=Rules(attempts=3, delay_max=0), profile="u"
    )
    fetcher = _LoginForms()
    run_job_inline(library, job_id, fetcher_factory=lambda _n: fetcher)
    assert fetcher.fetched == ["https://forum.example.org/"]
    (page,) = page_list(library, job_id, states=["failed"])
    assert page.reason == "session expired"
    # nothing captured and no retry gets past the form: the job needs a login, it is not
    # queued for an automatic retry (create_job allows two)
    summary = job_detail(library, job_id).summary
    assert summary.status == "needs_login"
    assert summary.last_error == (
        "no page captured: the session of profile 'u' has expired; log in again with "
        "`archiver login u https://forum.example.org/` (in the app: Capture > Log In to a "
        f"Site…); then: archiver job retry {job_id}"
    )
    run_job_inline(library, job_id, fetcher_factory=lambda _n: fetcher)  # a worker leaves it
    assert fetcher.fetched == ["https://forum.example.org/"]
    from archiver_app.crawl.jobs import retry_job

    assert retry_job(library, job_id) == 1  # once logged in, Retry captures it again
