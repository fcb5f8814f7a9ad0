"""Release an edition: one WACZ of its members, with its reports and bibliography beside it.

``archiver edition export NAME OUT.wacz`` writes, in OUT's folder::

    OUT.wacz                 the members' records (export/: the same writer, signed on ask)
    OUT.coverage.json        the coverage report, every target once
    OUT.coverage.md          the same for people
    OUT.targets.csv          the target ledger
    OUT.bib                  a BibTeX entry per member capture
    OUT.csl.json             the same as CSL-JSON

The reports are named after the WACZ, not the edition (:func:`release_paths`): releases
of one edition at different states, or to different names, never share a report.

Members offloaded to drives (an accepted edition is not pinned on this computer: see
docs/editions.md, "Frozen") are copied back first, verified, from the mounted drives that
hold them (:func:`archiver_app.mirror.restore`); when a drive is missing the release
stops before writing anything and names the drives to plug in. Then every file the release
reads is checked against its capture-time digest (:mod:`.release_check`): bit rot is
repaired from a drive, and a member altered after capture or missing stops the release
before anything is written, naming the captures and files.

It runs as a job of kind ``export`` (its config carries ``edition``), so the GUI enqueues it
and the CLI runs it in the foreground like any export. Signed, it can carry an RFC 3161
timestamp of its signature as any signed export does (``export/timestamps.py``; without
network the request waits in ``export/pending.py``'s queue). The reports are written after the
WACZ, each atomically: an interrupted release leaves no half-written file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from archiver_app.durable import atomic_write_text
from archiver_app.editions.coverage import coverage_json, coverage_markdown, targets_csv
from archiver_app.editions.ledger import member_snapshot_ids
from archiver_app.editions.release_check import check_members
from archiver_app.editions.service import coverage, get_edition, refresh
from archiver_app.editions.states import EditionState
from archiver_app.errors import InputError
from archiver_app.export.identity import package_hash_of
from archiver_app.hashing import hash_file
from archiver_app.library import Library
from archiver_app.store.models import Snapshot
from archiver_app.tasks import CancelToken, Progress, null_progress

if TYPE_CHECKING:
    from archiver_app.editions.recorded import RecordedRelease
    from archiver_app.export.writer import ExportResult
    from archiver_app.jobs.kinds import RunningJob


@dataclass
class ReleaseResult:
    edition: str
    state: str  # the edition's state when released (research_ready: accepted)
    wacz: ExportResult
    files: list[Path] = field(default_factory=list)  # the reports beside the WACZ
    #: The WACZ's SHA-256 as written (``archiver cite NAME`` quotes it; a timestamp added
    #: later by ``archiver export timestamp-pending`` changes the file, and the job's
    #: recorded result takes the new one: :func:`.recorded.restamped`), and when.
    sha256: str | None = None
    released_at: datetime | None = None
    #: :func:`members_digest` of the captures in the WACZ: ``archiver cite NAME`` names only
    #: a release of the members the edition has now (not a draft of others).
    members_digest: str | None = None
    #: "sha256:…" of its datapackage.json: a copy whose other bytes differ has the same
    package_hash: str | None = None
    #: The release ``archiver cite NAME`` quoted before this one was written (None: none),
    #: and the one it quotes now: this one (``cited``), or another: an unsigned release
    #: never takes a signed one's place (:func:`.recorded.judge`).
    cited_before: RecordedRelease | None = None
    cited_now: RecordedRelease | None = None
    cited: bool = False

    @property
    def path(self) -> Path:
        return self.wacz.path

    def citation(self) -> str:
        """What writing this release did to the one ``archiver cite`` quotes, in words
        (the CLI's, the app's and the job log's)."""
        cite = f"`archiver cite {self.edition}`"
        what = ("the release to cite" if self.state == EditionState.RESEARCH_READY
                else f"the draft {cite} quotes until the edition is accepted")  # fmt: skip
        before, now = self.cited_before, self.cited_now
        if self.cited:
            if before is None:
                return f"It is {what}: {cite} quotes its SHA-256."
            return (f"It is now {what}, in place of {_said(before)}: {cite} quotes the new "
                    "SHA-256.")  # fmt: skip
        if now is None:
            return f"{cite} quotes no release of it."
        quotes = f"{cite} still quotes"
        if before is not None and before.job_id != now.job_id and before.is_at(self.path):
            quotes = f"it wrote over {_said(before)}, and {cite} now quotes"
        if now.signed and not self.wacz.signer:
            return (f"It is not the release to cite: {quotes} the signed release {_said(now)}; "
                    "an unsigned release never takes a signed one's place (sign a new "
                    "release to replace it).")  # fmt: skip
        return f"It is not the release to cite: {quotes} {_said(now)}."

    def describe(self) -> list[str]:
        """The job log's last line: :meth:`citation`."""
        return [self.citation()] if self.sha256 else []


def _said(release: RecordedRelease) -> str:
    signed = "signed" if release.signed else "unsigned"
    return f"{release.path} (SHA-256 {release.sha256}, {signed})"


def release_config(
    name: str,
    output: Path,
    *,
    sign: bool = False,
    overwrite: bool = False,
    timestamp: str | None = None,
) -> dict[str, Any]:
    """The ``export`` job's arguments for an edition release (``timestamp``: the URL of
    the authority to stamp the signature; only with ``sign``)."""
    if timestamp and not sign:
        raise InputError("a timestamp stamps the signature: sign the release too (--sign)")
    return {"edition": name, "output": str(output), "sign": sign, "overwrite": overwrite,
            "timestamp": timestamp or None}  # fmt: skip


def release_paths(output: Path) -> list[Path]:
    """The reports beside the release's WACZ ``output``, named after it: ``out/x.wacz`` ->
    ``out/x.coverage.json`` ... (as an export's bibliography is), so the files of one
    release always go together whatever the edition's name."""
    stem = output.name.removesuffix(".wacz")
    return [
        output.with_name(f"{stem}{suffix}")
        for suffix in (".coverage.json", ".coverage.md", ".targets.csv", ".bib", ".csl.json")
    ]


@dataclass(frozen=True)
class ReleaseInPlace:
    """The files of a release already at an output: what writing there would replace.
    ``edition`` and ``state`` are read from its coverage report (None: no readable one);
    ``current``: the release on record there is of that edition as it is now, the rule
    ``archiver cite`` names a release by (:func:`.recorded.of_now`); ``other_members``:
    it holds other members than the edition has now."""

    files: tuple[Path, ...]  # the WACZ and the reports that exist
    edition: str | None = None
    state: str | None = None
    current: bool = False
    other_members: bool = False
    cited: bool = False  # it is the release ``archiver cite`` quotes

    @property
    def accepted(self) -> bool:
        """Is it the release of the edition's current acceptance that cite names?"""
        return self.cited and self.state == EditionState.RESEARCH_READY

    @property
    def what(self) -> str | None:
        """'the accepted release of edition NAME', 'a release of an earlier acceptance of
        edition NAME ...', 'a STATE draft of edition NAME', or None when no report says:
        the one wording of the CLI's refusal and the app's question."""
        if self.state is None:
            return None
        if self.accepted:
            return f"the accepted release of edition {self.edition}"
        if self.state == EditionState.RESEARCH_READY and self.current:
            return f"a release of accepted edition {self.edition}, not the one cited"
        if self.state == EditionState.RESEARCH_READY:
            since = ", whose members have changed since" if self.other_members else ""
            return f"a release of an earlier acceptance of edition {self.edition}{since}"
        return f"a {self.state} draft of edition {self.edition}"

    def describe(self) -> str:
        """' (WHAT)' (see :attr:`what`), or '' when no report says, for a message."""
        return f" ({self.what})" if self.what else ""


def release_in_place(lib: Library, output: Path) -> ReleaseInPlace | None:
    """What a release to ``output`` would replace (None: nothing is there)."""
    from archiver_app.editions.recorded import judged_releases, of_now, release_at

    output = Path(output).absolute()
    files = tuple(p for p in (output, *release_paths(output)) if p.exists())
    if not files:
        return None
    try:
        report = json.loads(release_paths(output)[0].read_text(encoding="utf-8"))
        edition, state = str(report["edition"]), str(report["state"])
    except (OSError, ValueError, KeyError, TypeError):  # none, or not one of ours
        return ReleaseInPlace(files)
    on_record = release_at(lib, output)
    if on_record is None or on_record[0].edition != edition:
        return ReleaseInPlace(files, edition, state)  # no release of it on record here
    release, now = on_record
    current = now is not None and of_now(release, now)
    of = release.members_digest
    other = now is not None and of is not None and not now.holds(of)
    cited = current and any(
        j.cited and j.release.job_id == release.job_id for j in judged_releases(lib, edition)
    )
    return ReleaseInPlace(files, edition, state, current, other, cited)


def export_edition(
    lib: Library,
    name: str,
    output: Path,
    *,
    sign: bool = False,
    overwrite: bool = False,
    timestamp: str | None = None,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> ReleaseResult:
    """Write the release of edition ``name`` (see the module docstring); signed with
    ``sign``, and with ``timestamp`` (an authority's URL) its signature timestamped.

    Raises:
        InputError: no such edition, no member captured, or the WACZ or a report file
            exists and ``overwrite`` is not set. Nothing is written then.
        MembersNotAsCaptured: a file of a member differs from its capture-time digest or
            is gone, and no mounted drive could restore it (:func:`check_members`).
            Nothing is written then.
    """
    from archiver_app.cite.formats import bibliography
    from archiver_app.editions.recorded import cited_release
    from archiver_app.export import Selection, export
    from archiver_app.export.pending import after_export
    from archiver_app.export.signing import Signing

    if timestamp and not sign:
        raise InputError("a timestamp stamps the signature: sign the release too (--sign)")
    signing = Signing(timestamp=timestamp or None) if sign else None
    refresh(lib, name)  # a frozen edition keeps its members; others catch up first
    with lib.session() as s:
        ed = get_edition(s, name)
        state = ed.state
        members = member_snapshot_ids(s, ed.id)
        digest = members_digest(s, members)
    if not members:
        raise InputError(f"edition {name} has no captured member to export")
    before = cited_release(lib, name)
    reports = release_paths(Path(output).absolute())
    if not overwrite and (there := release_in_place(lib, Path(output))):
        raise InputError(f"{there.files[0]} exists already{there.describe()}; use "
                         "--overwrite to replace that release and its reports")  # fmt: skip
    bring_back(lib, members, progress=progress, cancel=cancel)
    check_members(lib, name, state, release_files(lib, members), members,
                  progress=progress, cancel=cancel)  # fmt: skip
    title = f"Edition {name}" + ("" if state == EditionState.RESEARCH_READY else f" ({state})")
    wacz = export(
        lib,
        Selection(snapshot_ids=tuple(members), title=title),
        Path(output),
        fmt="wacz",
        overwrite=overwrite,
        sign=signing or False,
        checked=True,  # check_members did, with the edition's own advice
        progress=progress,
        cancel=cancel,
    )
    if signing is not None:
        after_export(lib, wacz, signing)  # a timestamp without network waits in a queue
    cov = coverage(lib, name)
    texts = (coverage_json(cov), coverage_markdown(cov), targets_csv(cov),
             *bibliography(lib, sorted(members)))  # fmt: skip
    for path, text in zip(reports, texts, strict=True):
        atomic_write_text(path, text)
    sha256, _size = hash_file(wacz.path)
    result = ReleaseResult(edition=name, state=state, wacz=wacz, files=reports, sha256=sha256,
                           released_at=lib.clock(), members_digest=digest,
                           package_hash=package_hash_of(wacz.path),
                           cited_before=before)  # fmt: skip
    _judge_citation(lib, result)
    return result


def _judge_citation(lib: Library, result: ReleaseResult) -> None:
    """Which release ``archiver cite`` quotes now that ``result`` is written (its job is
    not recorded as completed yet: it is judged as the newest)."""
    from archiver_app.editions.recorded import RecordedRelease, edition_now, judge
    from archiver_app.editions.recorded import recorded_releases as on_record

    this = RecordedRelease(
        job_id=0,
        edition=result.edition,
        path=str(Path(result.path).absolute()),
        sha256=result.sha256 or "",
        released_at=result.released_at,
        state=result.state,
        members_digest=result.members_digest,
        signed=bool(result.wacz.signer),
        package_hash=result.package_hash,
    )
    with lib.session() as s:
        judged = judge([this, *on_record(s)], edition_now(s, result.edition))
    result.cited_now = next((j.release for j in judged if j.cited), None)
    result.cited = result.cited_now is this


#: What starts a :func:`members_digest`; one without it is an :func:`ids_digest`.
BY_UID = "uid:"


def members_digest(s: Session, snapshot_ids: Iterable[int]) -> str:
    """A short fingerprint of a set of member captures, kept in a release's job result
    instead of the captures themselves, which may be thousands: of their uids. Not of
    their ids: SQLite gave a deleted last row's id to the next capture (before migration
    0014), so a capture deleted and another made since could have the same fingerprint,
    and ``cite`` would name a release holding the deleted one as a release of the edition
    as it is now."""
    ids = sorted(set(snapshot_ids))
    uids: list[str] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        uids += s.scalars(select(Snapshot.uid).where(Snapshot.id.in_(chunk)))
    text = ",".join(sorted(uids))
    return BY_UID + hashlib.sha256(text.encode("utf-8")).hexdigest()


def ids_digest(snapshot_ids: Iterable[int]) -> str:
    """The fingerprint releases recorded before :func:`members_digest`: of the members'
    ids (compared as such with an edition's members now)."""
    text = ",".join(str(i) for i in sorted(set(snapshot_ids)))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def release_files(lib: Library, snapshot_ids: list[int]) -> set[int]:
    """The files a release of ``snapshot_ids`` reads: theirs, and the revisit originals
    they need."""
    from archiver_app.mirror.deps import file_dependencies, snapshots_files

    with lib.session() as s:
        own = snapshots_files(s, snapshot_ids)
        return set(own).union(*file_dependencies(s, own).values())


def bring_back(
    lib: Library,
    snapshot_ids: list[int],
    *,
    progress: Progress = null_progress,
    cancel: CancelToken | None = None,
) -> int:
    """Copy back, verified, the files of ``snapshot_ids`` (and the revisit originals they
    need) that were offloaded; return how many. Raises ``DriveNotMounted`` naming the
    drives to plug in when some are on no mounted drive."""
    from sqlalchemy import select

    from archiver_app.editions.ledger import chunks
    from archiver_app.store.models import File, LocalState

    wanted = release_files(lib, snapshot_ids)
    with lib.session() as s:
        absent = [
            fid
            for part in chunks(sorted(wanted))
            for fid in s.scalars(
                select(File.id).where(File.id.in_(part), File.local_state != LocalState.PRESENT)
            )
        ]
    if not absent:
        return 0
    from archiver_app.mirror import restore

    restore(lib, absent, progress=progress, cancel=cancel)
    return len(absent)


def run_release(
    lib: Library, job: RunningJob, progress: Progress, cancel: CancelToken
) -> ReleaseResult:
    """The ``export`` job's runner when its config names an edition."""
    c = job.config
    return export_edition(
        lib,
        str(c["edition"]),
        Path(c["output"]),
        sign=bool(c.get("sign")),
        overwrite=bool(c.get("overwrite")),
        timestamp=c.get("timestamp"),
        progress=progress,
        cancel=cancel,
    )
