"""What names a capture: its id, its uid, or the identifier its citations give it.

A citation names the archived copy ``urn:archiver:<library id>:<capture uid>``
(:func:`capture_urn`), which stays the same wherever the library is moved; an edition is
``urn:archiver:<library id>:edition:<name>`` (:func:`edition_urn`). The commands that take
a capture (``archiver cite``, ``archiver diff``, the Compare view) all find it here
(:func:`find_capture`), so the identifier a citation gives can be looked up again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from archiver_app.errors import InputError
from archiver_app.store.models import Snapshot

if TYPE_CHECKING:
    from archiver_app.library import Library

URN_PREFIX = "urn:archiver:"
#: The key of a snapshot's ``provenance`` that holds the identifier it was first cited by,
#: in the library an import of an Archiver export came from.
URN_KEY = "urn"
#: A capture uid as Archiver makes it (:func:`archiver_app.ids.new_snapshot_uid`; older
#: libraries' 8-digit tokens too).
UID_SHAPE = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8,16}")
#: ``urn:archiver:LIBRARY:UID`` or ``urn:archiver:LIBRARY:edition:NAME``.
_URN = re.compile(
    r"urn:archiver:(?P<lib>[A-Za-z0-9-]{1,64}):"
    r"(?:edition:(?P<edition>[A-Za-z0-9._-]{1,100})|(?P<uid>[A-Za-z0-9._-]{1,40}))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ArchiverUrn:
    """What a ``urn:archiver:`` identifier names: a capture (``uid``) or an edition
    (``edition``) of the library ``library``."""

    library: str
    uid: str | None = None
    edition: str | None = None


def capture_urn(library_id: str, uid: str) -> str:
    """The identifier citations give capture ``uid`` of library ``library_id``."""
    return f"{URN_PREFIX}{library_id}:{uid}"


def cited_urn(library_id: str, uid: str, provenance: object) -> str:
    """The identifier a capture is cited by: the one it was first cited by, which an import
    of an Archiver export records in its ``provenance`` (``urn``), else its own in library
    ``library_id``."""
    recorded = provenance.get(URN_KEY) if isinstance(provenance, dict) else None
    if isinstance(recorded, str) and (urn := parse_urn(recorded)) and urn.uid is not None:
        return recorded
    return capture_urn(library_id, uid)


def edition_urn(library_id: str, name: str) -> str:
    """The identifier citations give edition ``name`` of library ``library_id``."""
    return f"{URN_PREFIX}{library_id}:edition:{name}"


def parse_urn(text: str) -> ArchiverUrn | None:
    """The parts of a ``urn:archiver:`` identifier (its prefix in any case, as URNs are
    compared); None for anything else."""
    m = _URN.fullmatch(text.strip())
    if m is None:
        return None
    return ArchiverUrn(library=m["lib"].lower(), uid=m["uid"], edition=m["edition"])


def find_capture(lib: Library, ref: str | int) -> Snapshot:
    """A snapshot by its id (a number), its uid, or the ``urn:archiver:`` identifier its
    citations give (InputError: none). A capture imported from another library's export is
    found by the identifier it had there (:func:`cited_urn`)."""
    key = str(ref).strip()
    urn = parse_urn(key) if key.lower().startswith(URN_PREFIX) else None
    with lib.session() as s:
        if urn is None:
            where = Snapshot.uid == key
            if key.isdecimal():
                where = or_(Snapshot.id == int(key), where)
            snap = s.execute(select(Snapshot).where(where)).scalars().first()
        elif urn.uid is None:  # an edition's
            snap = None
        else:
            snap = _by_urn(s, lib, urn.library, urn.uid)
        if snap is None:
            raise InputError(f"no capture {key!r} in this library" + other_library(lib, key))
        s.expunge(snap)
        return snap


def _by_urn(s: Session, lib: Library, library: str, uid: str) -> Snapshot | None:
    """The capture cited as ``urn:archiver:<library>:<uid>``: this library's capture of that
    uid, or the capture an import recorded it on (it keeps its uid when it is free: looked
    at first)."""
    same = s.execute(select(Snapshot).where(Snapshot.uid == uid)).scalars().first()
    if same is not None and cited_urn(lib.id, uid, same.provenance).lower() == (
        capture_urn(library, uid).lower()
    ):
        return same
    if library == lib.id.lower():
        return same
    wanted = capture_urn(library, uid)
    recorded = Snapshot.provenance[URN_KEY].as_string()
    stmt = select(Snapshot).where(func.lower(recorded) == wanted.lower()).order_by(Snapshot.id)
    return s.execute(stmt).scalars().first()


def other_library(lib: Library, ref: str) -> str:
    """What to add to "not in this library" when ``ref`` is the identifier of a capture or
    edition of another library: which one it names."""
    urn = parse_urn(ref)
    if urn is None or urn.library == lib.id.lower():
        return ""
    what = "an edition" if urn.edition else "a capture"
    return f" (it names {what} of library {urn.library}; this is library {lib.id})"
