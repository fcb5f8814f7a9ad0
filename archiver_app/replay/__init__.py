"""Offline replay without Qt: resolve (url, time) to a stored record and build the response.

:class:`Replayer` is the entry point (one per library, shared by threads); :func:`resolve`
is a one-off shortcut. Errors are :class:`ReplayError` subclasses with a ``kind`` the
replay view turns into an in-page message.
"""

from archiver_app.replay.errors import (
    DamagedRecord,
    NotArchived,
    RecordUnavailable,
    RedirectLoop,
    ReplayError,
)
from archiver_app.replay.replayer import Capture, Replayer, resolve
from archiver_app.replay.response import ReplayResponse

__all__ = [
    "Capture",
    "DamagedRecord",
    "NotArchived",
    "RecordUnavailable",
    "RedirectLoop",
    "ReplayError",
    "ReplayResponse",
    "Replayer",
    "resolve",
]
