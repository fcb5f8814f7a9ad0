"""Background work without Qt: a progress sink, a cancel token and a task protocol.

Core code that runs for long (captures, crawls, exports, mirrors, migrations) takes a
:class:`Progress` and a :class:`CancelToken` and returns a typed result. Only ``gui/`` turns
progress into Qt signals, by polling :class:`ThrottledProgress` (ten times a second is
plenty for a person; a crawl can emit thousands of events a second).
"""

from archiver_app.tasks.progress import (
    Cancelled,
    CancelToken,
    Progress,
    ProgressUpdate,
    ThrottledProgress,
    null_progress,
)

__all__ = [
    "CancelToken",
    "Cancelled",
    "Progress",
    "ProgressUpdate",
    "ThrottledProgress",
    "null_progress",
]
