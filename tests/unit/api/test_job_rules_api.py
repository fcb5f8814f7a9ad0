"""``lib.jobs.rules`` and ``lib.jobs.update_rules``: a crawl's current rules, changed by
what was edited only (the Jobs panel's Apply)."""

from __future__ import annotations

from archiver_app.capture.login_check import LOGOUT_IGNORE
from archiver_app.crawl.jobs import create_job
from archiver_app.crawl.rules import Rules
from archiver_app.library import Library


def test_update_rules_changes_only_what_it_is_given(library: Library) -> None:
    library.profiles.create("site")
    job = create_job(
        library,
        ["https://site.example/"],
        rules=Rules(ignore=("/private/",), concurrency=1, ignore_sets=("calendars",)),
        profile="site",
    )
    first = library.jobs.rules(job)
    assert first.ignore == ("/private/", LOGOUT_IGNORE) and first.guards == (LOGOUT_IGNORE,)
    # nothing changes: no new rules version
    assert library.jobs.update_rules(job) == first.version
    assert library.jobs.update_rules(job, add_ignore=["/private/"], concurrency=1) == first.version
    assert library.jobs.rules(job) == first

    version = library.jobs.update_rules(job, concurrency=4)
    assert version == first.version + 1
    now = library.jobs.rules(job)
    assert now.ignore == first.ignore and now.concurrency == 4
    library.jobs.update_rules(job, remove_ignore=["/private/"], add_ignore=["/tag/"])
    assert library.jobs.rules(job).ignore == (LOGOUT_IGNORE, "/tag/")
    assert library.jobs.rules(job).concurrency == 4

    from archiver_app.crawl.api import job_detail

    assert job_detail(library, job).rules.ignore_sets == ("calendars",)  # untouched


def test_a_crawl_without_a_profile_has_no_guard(library: Library) -> None:
    job = create_job(library, ["https://site.example/"], rules=Rules(ignore=(r"/logout",)))
    assert library.jobs.rules(job).guards == ()
