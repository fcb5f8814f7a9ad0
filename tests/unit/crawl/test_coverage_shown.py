"""A job's coverage.md shows addresses readable (``bücher.example/мир``); coverage.json and
the ledger keep them as stored."""

from __future__ import annotations

import json

from sqlalchemy import update

from archiver_app.crawl.coverage import write_coverage_report
from archiver_app.crawl.jobs import create_job
from archiver_app.library import Library
from archiver_app.store.models import Page, PageState

STORED = "http://xn--bcher-kva.example/%D0%BC%D0%B8%D1%80/%E6%9D%B1%E4%BA%AC.html"
SHOWN = "http://bücher.example/мир/東京.html"


def test_coverage_md_shows_addresses_readable_and_the_json_keeps_them_stored(
    library: Library,
) -> None:
    job_id = create_job(library, [STORED])
    with library.session() as s, s.begin():
        s.execute(
            update(Page)
            .where(Page.job_id == job_id)
            .values(state=PageState.FAILED, attempts=2, last_error=f"timeout loading {STORED}")
        )
    paths = write_coverage_report(library, job_id)
    md = (library.root / paths.markdown).read_text()
    assert f"# Coverage of job {job_id}: {SHOWN}" in md and f"- {SHOWN}" in md
    assert f"| {SHOWN} | 2 | timeout loading {SHOWN} |" in md
    assert "xn--" not in md and "%D0" not in md
    report = json.loads((library.root / paths.json).read_text())
    assert report["seeds"] == [STORED] and report["failed"][0]["url"] == STORED
    assert STORED in (library.root / paths.ledger).read_text()
