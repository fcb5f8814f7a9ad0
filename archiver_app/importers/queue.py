"""Queue capture jobs for URLs that came from bookmarks, URL lists or browser history.

A queued job is a ``jobs`` row (status ``queued``) with one READY ``pages`` row per URL; the
crawl/capture worker picks it up. ``config`` holds ``{"kind": "capture", "seeds": [...],
"source": ..., "tags": {url: [tag, ...]}}`` so the tags (bookmark folders) reach the
snapshots when they are captured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from archiver_app.library import Library
from archiver_app.store.models import Job, JobStatus, Page, PageState


def queue_capture_job(
    lib: Library,
    urls: Sequence[str],
    *,
    collection: str,
    name: str,
    source: str,
    tags: Mapping[str, Sequence[str]] | None = None,
) -> int:
    """Create a queued capture job for ``urls`` (deduplicated, order kept); return its id."""
    seen: dict[str, None] = dict.fromkeys(urls)
    unique = list(seen)
    collection_id = lib.ensure_collection(collection)
    config = {
        "kind": "capture",
        "seeds": unique,
        "source": source,
        "tags": {u: sorted(set(t)) for u, t in (tags or {}).items() if t},
    }
    with lib.write() as s:
        job = Job(
            collection_id=collection_id,
            name=name,
            status=JobStatus.QUEUED,
            config=config,
            items_queued=len(unique),
        )
        s.add(job)
        s.flush()
        s.add_all(Page(job_id=job.id, url=u, state=PageState.READY, depth=0) for u in unique)
        return job.id
