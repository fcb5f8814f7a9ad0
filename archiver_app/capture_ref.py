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

from sqlalchemy import or_, select

from archiver_app.errors import InputError
from archiver_app.store.models import Snapshot

if TYPE_CHECKING:
    from archiver_app.library import Library

URN_PREFIX = "urn:archiver:"
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
    citations give (InputError: none)."""
    key = str(ref).strip()
    urn = parse_urn(key) if key.lower().startswith(URN_PREFIX) else None
    with lib.session() as s:
        if urn is not None and urn.uid is not None and urn.library == lib.id.lower():
            stmt = select(Snapshot).where(Snapshot.uid == urn.uid)
        elif key.isdecimal():
            stmt = select(Snapshot).where(or_(Snapshot.id == int(key), Snapshot.uid == key))
        else:
            stmt = select(Snapshot).where(Snapshot.uid == key)
        snap = s.execute(stmt).scalars().first() if urn is None or urn.uid else None
        if snap is None:
            raise InputError(f"no capture {key!r} in this library" + other_library(lib, key))
        s.expunge(snap)
        return snap


def other_library(lib: Library, ref: str) -> str:
    """What to add to "not in this library" when ``ref`` is the identifier of a capture or
    edition of another library: which one it names."""
    urn = parse_urn(ref)
    if urn is None or urn.library == lib.id.lower():
        return ""
    what = "an edition" if urn.edition else "a capture"
    return f" (it names {what} of library {urn.library}; this is library {lib.id})"
