"""Queue capture jobs for URLs that came from bookmarks, URL lists or browser history.

Jobs are made by the crawl area's :func:`archiver_app.crawl.jobs.create_job` with scope
``page`` (each URL is captured, nothing is followed). Tags are per job there, so URLs are
grouped by their tag set: one job per bookmarks folder path, each tagged with the folder
names (plus any ``--tag``), and a single job for a plain list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.validation import validate_capture_url


@dataclass
class Queued:
    job_ids: list[int] = field(default_factory=list)
    urls: int = 0
    problems: list[str] = field(default_factory=list)


def queue_capture_jobs(
    lib: Library,
    items: Sequence[tuple[str, Sequence[str]]],
    *,
    collection: str,
    name: str,
) -> Queued:
    """Create queued page-scope capture jobs for ``(url, tags)`` items, one per tag set.

    URLs are deduplicated (first occurrence wins, order kept); an invalid URL is reported
    in ``problems`` and left out.
    """
    from archiver_app.crawl.jobs import create_job

    groups: dict[tuple[str, ...], list[str]] = {}
    seen: set[str] = set()
    result = Queued()
    for raw, tags in items:
        try:
            url = validate_capture_url(raw)
        except InputError as exc:
            result.problems.append(str(exc))
            continue
        if url in seen:
            continue
        seen.add(url)
        groups.setdefault(tuple(sorted(set(tags))), []).append(url)
    for tags, urls in groups.items():
        label = f"{name} [{', '.join(tags)}]" if tags else name
        try:
            job_id = create_job(
                lib, urls, scope="page", collection=collection, tags=tags, name=label
            )
        except InputError as exc:
            result.problems.append(f"{label}: {exc}")
            continue
        result.job_ids.append(job_id)
        result.urls += len(urls)
    return result
