"""Job kinds and the registry that maps each kind to the typed callable that runs it.

A runner is ``run(library, job, progress, cancel) -> result``: ``job`` is a
:class:`RunningJob` (its id, kind, the arguments stored in ``config``, and whether an
earlier run was interrupted), ``result`` any value :func:`to_plain` can store as JSON
(dataclasses, paths, enums, dates, lists). A kind is *resumable* when running it again
after a kill skips the work already done (import, mirror, migrate ...): the runtime then
restarts it instead of reporting it failed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum, StrEnum
from pathlib import PurePath
from typing import Any

from archiver_app.errors import InputError
from archiver_app.library import Library
from archiver_app.tasks import CancelToken, Progress


class JobKind(StrEnum):
    CRAWL = "crawl"
    CAPTURE = "capture"
    IMPORT = "import"
    EXPORT = "export"
    MIRROR = "mirror"
    VERIFY = "verify"
    OFFLOAD = "offload"
    MIGRATE = "migrate"
    MOVE = "move"
    BROWSE = "browse"  # capture while browsing: one visible browser session, a page per visit
    REINDEX = "reindex"  # the full-text index rebuilt from text files (search/reindex.py)


#: Kinds the crawl worker runs (their pages carry their own leases and attempts).
CRAWL_KINDS = frozenset({JobKind.CRAWL, JobKind.CAPTURE})


def _ignore(event: object) -> None:
    """The default event listener: nobody in this process listens."""


@dataclass(frozen=True)
class RunningJob:
    """What a runner gets: the job's id, kind and arguments.

    ``emit`` reaches a listener in the same process (the CLI prints each imported file's
    outcome, the mirror's plan); a job run elsewhere has none, and a runner must not need
    one. ``resumed`` is True when an earlier run of this job was interrupted.
    """

    id: int
    kind: JobKind
    config: Mapping[str, Any]
    resumed: bool = False
    emit: Callable[[object], None] = _ignore

    def with_emit(self, emit: Callable[[object], None]) -> RunningJob:
        return dataclasses.replace(self, emit=emit)


Runner = Callable[[Library, RunningJob, Progress, CancelToken], Any]


#: Called once a job of a kind that cannot resume is reported interrupted, with its
#: config and the pid of the process that died (None when it ran on another host).
Cleanup = Callable[[Mapping[str, Any], int | None], None]


#: ``supersedes(old, new)``: whether a run with config ``new`` does all the work of an
#: interrupted job with config ``old`` (then that job ends instead of waiting to resume).
Supersedes = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


@dataclass(frozen=True)
class KindSpec:
    kind: JobKind
    run: Runner
    resumable: bool
    #: Removes what a killed run left behind (its temporary files), if anything can.
    cleanup: Cleanup | None = None
    #: For a resumable kind: when a later job makes an interrupted one pointless.
    supersedes: Supersedes | None = None


class Registry:
    """Kind -> :class:`KindSpec`. Built explicitly (no import-time registration)."""

    def __init__(self, specs: Iterable[KindSpec] = ()) -> None:
        self._specs: dict[JobKind, KindSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: KindSpec) -> None:
        if spec.kind in CRAWL_KINDS:
            raise ValueError(f"{spec.kind} jobs are run by the crawl worker")
        self._specs[spec.kind] = spec

    def get(self, kind: JobKind) -> KindSpec:
        try:
            return self._specs[kind]
        except KeyError:
            raise InputError(f"this version of Archiver cannot run {kind} jobs") from None

    def kinds(self) -> list[JobKind]:
        return list(self._specs)


#: Longest list kept in a stored result (an import of 50,000 files keeps its counts).
MAX_STORED_ITEMS = 500


def to_plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses become dicts, paths and enums text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name, attr in vars(type(value)).items():  # totals a report computes (pages ...)
            if isinstance(attr, property) and not name.startswith("_"):
                fields[name] = to_plain(getattr(value, name))
        return fields
    if isinstance(value, Mapping):
        pairs = list(value.items())
        kept = {str(k): to_plain(v) for k, v in pairs[:MAX_STORED_ITEMS]}
        if len(pairs) > MAX_STORED_ITEMS:
            kept["..."] = f"and {len(pairs) - MAX_STORED_ITEMS} more"
        return kept
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        plain = [to_plain(v) for v in items[:MAX_STORED_ITEMS]]
        if len(items) > MAX_STORED_ITEMS:
            plain.append(f"... and {len(items) - MAX_STORED_ITEMS} more")
        return plain
    return str(value)
