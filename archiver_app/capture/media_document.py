"""A sound or video opened as the page itself (the address of an ``.mp3``, ``.wav`` or
``.mp4``, not a page embedding it) is kept whole as the page's record.

The tab shows such a file in a player of its own, which reads it again a range at a time
(``206`` answers): the body of the navigation's own ``200`` never arrives, and no event
ends it. Left so, it would be written empty and cut off (``WARC-Truncated: time``), and
every replay (the app, ``archiver serve``, pywb, ReplayWeb.page, a WACZ's index) would
find an empty page. :func:`record_media_document` writes that answer with the whole file,
fetched again in the page's name (the recorder's :data:`.recorder.Refetch`: the status the
browser saw, within the byte limit), before the recorder finishes.
"""

from __future__ import annotations

from archiver_app.capture.extract import is_media
from archiver_app.capture.recorder import NetworkRecorder

#: Why the page's own answer was fetched again (its provenance note says so).
READ_BY_PLAYER = "the browser's player read the file itself, in parts"


async def record_media_document(recorder: NetworkRecorder) -> bool:
    """Write the page's ``200`` answer whole when it is a sound or a video the browser
    never finished (see the module docstring); True when it was such an answer."""
    ex = recorder.exchanges.get(recorder.main.request_id or "")
    if ex is None or not ex.hops or recorder.closed:
        return False
    if ex.written or ex.writing or ex.finished or ex.failed:
        return False  # its body came (or its end is known): the recorder wrote it
    answer = ex.hops[-1].response
    if answer is None or int(answer.get("status") or 0) != 200:
        return False
    if not is_media(str(answer.get("mimeType") or "")):
        return False
    await recorder.write_unfinished(ex, READ_BY_PLAYER)
    return True
