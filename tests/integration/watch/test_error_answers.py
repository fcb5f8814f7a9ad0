"""A watched page that answers an HTTP error: captured (the error page is what the site
served), never "failed", but never silently "unchanged" either. A mistyped address is
warned about from its first capture; a page that starts answering 404 "now answers an
error", apart from a page rewritten. Real Chromium, a real local site."""

from __future__ import annotations

import re

import pytest

from archiver_app import cli
from archiver_app.library import Library
from tests.helpers.webserver import LocalServer, Request, Response

pytestmark = pytest.mark.slow

PAGE = "<!doctype html><title>Notices</title><p>Notice number 1.</p>"
MISSING = "<!doctype html><title>Not found</title><p>No such page.</p>"


def test_error_answers_are_warned_and_told_apart(
    library: Library, local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = {"notices": False}

    def notices(_req: Request) -> Response:
        if gone["notices"]:
            return Response(404, MISSING.encode())
        return Response(200, PAGE.encode())

    local_server.route("/notices")(notices)
    local_server.route("/notcies")(lambda _req: Response(404, MISSING.encode()))
    notices_url, typo_url = local_server.url("/notices"), local_server.url("/notcies")
    root = ["--library", str(library.root)]
    watches = [library.jobs.watch([url], schedule="daily") for url in (notices_url, typo_url)]

    assert cli.main([*root, "watch", "run"]) == 0  # captured, not failed: exit 0
    out = capsys.readouterr().out
    assert f"first capture: {typo_url}" not in out  # one line a page: the warning says it
    typo = re.escape(typo_url)
    assert re.search(f"warning: {typo} answered HTTP 404 \\(capture \\d+, first capture\\)", out)
    assert f"warning: {notices_url}" not in out
    assert "2 pages: 0 changed, 0 failed, 1 answered an HTTP error" in out

    gone["notices"] = True
    assert cli.main([*root, "watch", "run", *map(str, watches)]) == 0
    out = capsys.readouterr().out
    assert f"now answers an error: {notices_url} (HTTP 200 -> 404, capture" in out
    assert f"changed: {notices_url}" not in out
    assert f"warning: {notices_url}" not in out  # said once, on its own line
    assert f"unchanged: {typo_url}" not in out
    assert re.search(f"warning: {typo} answered HTTP 404 \\(capture \\d+, unchanged\\)", out)
    (typo_line,) = _lines_of(out, typo_url)  # it never answered well: the address may be wrong
    assert typo_line.endswith("it never answered well in this watch: is the address right?")
    assert "2 pages: 1 changed, 0 failed, 2 answered an HTTP error" in out

    assert cli.main([*root, "watch", "changes"]) == 0
    assert f"{notices_url}  (HTTP 200 -> 404 (now an error)" in capsys.readouterr().out


def _lines_of(out: str, url: str) -> list[str]:
    """The report's lines about ``url`` (progress lines, indented, left out)."""
    return [line for line in out.splitlines() if url in line and not line.startswith(" ")]


def test_a_server_error_is_one_page_once_and_one_failure(
    library: Library, local_server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page answering 500 is tried again (each attempt keeps its error page): it is one
    page with one line, what its last attempt found since the run before, and one failed
    page, in `watch run` as in `archiver jobs`, `job show` and the Jobs panel (they said
    0, 1 and 2 failed: its two attempts counted as two)."""
    down = {"now": False}

    def page(_req: Request) -> Response:
        if down["now"]:
            return Response(500, b"<!doctype html><title>Server error</title><p>Oops.</p>")
        return Response(200, PAGE.encode())

    local_server.route("/down")(page)
    local_server.route("/fine")(lambda _req: Response(200, PAGE.encode()))
    down_url, fine_url = local_server.url("/down"), local_server.url("/fine")
    root = ["--library", str(library.root)]
    watch = library.jobs.watch([down_url, fine_url], schedule="daily")
    assert cli.main([*root, "watch", "run", str(watch)]) == 0
    # its first capture was queued, and this run made it: not "being captured already"
    out = capsys.readouterr().out
    assert "being captured" not in out
    (fine_capture,) = re.findall(f"ok 200 high {re.escape(down_url)} \\(#(\\d+)\\)", out)

    down["now"] = True
    assert cli.main([*root, "watch", "run", str(watch)]) == 1  # a page failed
    out = capsys.readouterr().out
    (line,) = _lines_of(out, down_url)
    assert line.startswith(f"now answers an error: {down_url} (HTTP 200 -> 500, capture ")
    assert line.endswith("; failed: no attempts left (HTTP 500 at the last)"), line
    assert _lines_of(out, fine_url) == [f"unchanged: {fine_url}"]
    assert "2 pages: 1 changed, 1 failed, 1 answered an HTTP error" in out
    _one_failed_page_everywhere(library, capsys)
    # The progress lines say the first error page is followed by another attempt (two
    # lines "kept as #7", then "#9", read as two pages before), and that each attempt got
    # an error answer, as the summary counts it: no "failed" (it said "failed" above "0 failed")
    assert f"failed {down_url}" not in out
    answered = f"  answered HTTP 500 {down_url}: its error page is kept as #"
    tries = [line.strip() for line in out.splitlines() if line.startswith(answered)]
    assert len(tries) == 2 and tries[0].endswith("; trying again"), tries
    assert not tries[1].endswith("; trying again")
    (summary_line,) = _lines_of(out, down_url)
    last = tries[1].split("kept as #")[1]
    assert f"capture {last})" in summary_line  # the capture the summary names ...
    assert cli.main([*root, "watch", "changes"]) == 0
    (listed,) = _lines_of(capsys.readouterr().out, down_url)
    assert listed.endswith(f" {last}`)")  # ... is the change listed, not the first attempt
    assert "HTTP 200 -> 500" in listed

    assert cli.main([*root, "watch", "run", str(watch)]) == 1  # still down: said again
    out = capsys.readouterr().out
    (line,) = _lines_of(out, down_url)
    assert line.startswith(f"warning: {down_url} answered HTTP 500 (capture ")
    # it answered well at the watch's first capture: the site fails, the address is right
    # (it asked "is the address right?", then said only "as at its capture before")
    assert line.endswith(
        f", unchanged): an error page was captured; the page answered fine before (capture "
        f"{fine_capture}); the site may be down; failed: no attempts left (HTTP 500 at the last)"
    ), line
    assert f"failed {down_url}" not in out
    assert "2 pages: 0 changed, 1 failed, 1 answered an HTTP error" in out


def _one_failed_page_everywhere(library: Library, capsys: pytest.CaptureFixture[str]) -> None:
    """The newest job (a watch run with one page answering 500 at both attempts) counts
    one failed page in `archiver jobs`, `archiver job show` and the Jobs panel's row."""
    root = ["--library", str(library.root)]
    (row, *_) = library.jobs.rows()
    assert (row.queued, row.done, row.failed) == (2, 1, 1)  # the panel: 1 done, 1 failed of 2
    assert cli.main([*root, "jobs"]) == 0
    out = capsys.readouterr().out
    assert "failed  name" in out.splitlines()[0]
    listed = next(x for x in out.splitlines() if x.split()[0] == str(row.id))
    assert listed.split()[6] == "1", listed  # id kind status 1/2 39.0 KB failed name
    assert cli.main([*root, "job", "show", str(row.id)]) == 0
    out = capsys.readouterr().out
    assert "1 done, 1 failed" in out
    assert "1 page failed (2 attempts failed)" in out
