"""Thumbnails of captures' screenshots, decoded off the GUI thread and cached.

Threading contract: :meth:`ThumbnailCache.small` / :meth:`large` run on the GUI thread and
never block: they return a cached ``QPixmap`` or ``None`` and queue a decode. Decoding
(``QImage`` read + scale, both thread-safe) runs in a ``QThreadPool``; the image comes back
through a queued signal and becomes a ``QPixmap`` on the GUI thread, after which
:attr:`ThumbnailCache.ready` fires with the snapshot id.

A capture with no ``screenshot.png`` in its folder (one imported from a WACZ or a WARC,
whose folder is the import's) has the PNG its WARC keeps (``urn:view:``) decoded instead,
read through ``lib.snapshots`` on the pool's thread; a capture found to have neither is
not asked again for a WARC record (an import's records do not change), only for its file.

A screenshot not found (or not readable) is looked for again when the table reads its rows
anew (:meth:`ThumbnailCache.look_again`: a capture completed, F5), and when asked for after
:data:`RETRY_SECONDS`: a capture's row is shown while it is pending, before its screenshot
is written, and its thumbnail comes when the row is shown again once it is complete.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QObject,
    QRect,
    QRunnable,
    QSize,
    Qt,
    QThreadPool,
    Signal,
)
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPixmap

from archiver_app.library import Library

SMALL = QSize(48, 32)
LARGE = QSize(480, 360)
#: The line around a small thumbnail: a page with a white top (most pages) is a thumbnail
#: and not an empty cell with a few specks in it.
FRAME = QColor(160, 160, 160)
SCREENSHOT_NAME = "screenshot.png"
#: A screenshot not found is looked for again when asked for this long after.
RETRY_SECONDS = 2.0


class _Relay(QObject):
    decoded = Signal(int, bool, object)  # snapshot id, large?, [QImage] or [] (never None)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.viewless: set[int] = set()  # captures with no screenshot record in their WARC


class _Decode(QRunnable):
    def __init__(  # noqa: PLR0917 - one decode's whole task
        self,
        relay: _Relay,
        snapshot_id: int,
        path: Path,
        size: QSize,
        large: bool,
        kept: Callable[[int], bytes | None] | None = None,
    ):
        super().__init__()
        self.relay, self.snapshot_id, self.path, self.size = relay, snapshot_id, path, size
        self.large = large
        self.kept = kept  # the PNG the capture's WARC keeps, asked when there is no file

    def _reader(self, buffer: QBuffer) -> QImageReader | None:
        if self.path.is_file():
            return QImageReader(str(self.path))
        if self.kept is None:
            return None
        try:
            data = self.kept(self.snapshot_id)
        except Exception:  # the database or the WARC not readable now: looked for again later
            self.kept = None
            return None
        if not data:
            self.relay.viewless.add(self.snapshot_id)  # (a set's add: safe from any thread)
            return None
        buffer.setData(QByteArray(data))
        return QImageReader(buffer)

    def run(self) -> None:
        image: QImage | None = None
        buffer = QBuffer()
        reader = self._reader(buffer)
        if reader is not None:
            full = reader.size()
            if full.isValid() and not self.large:
                # Decode only the top of a full-page screenshot: cheap and recognisable.
                crop_h = min(full.height(), full.width() * self.size.height() // self.size.width())
                reader.setClipRect(QRect(0, 0, full.width(), max(1, crop_h)))
            loaded = reader.read()
            if not loaded.isNull():
                image = loaded.scaled(
                    self.size,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
                if not self.large:
                    image = _framed(image)
        self.relay.decoded.emit(self.snapshot_id, self.large, [image] if image is not None else [])


def _framed(image: QImage) -> QImage:
    """``image`` with a one-pixel line drawn along its edge."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setPen(FRAME)
    painter.drawRect(0, 0, image.width() - 1, image.height() - 1)
    painter.end()
    return image


class ThumbnailCache(QObject):
    """Screenshot thumbnails by snapshot id, small (table) and large (detail pane)."""

    ready = Signal(int)  # snapshot id whose thumbnail was looked for (found or not)

    def __init__(self, library: Library, *, capacity: int = 600, parent: QObject | None = None):
        super().__init__(parent)
        self.library = library
        self.capacity = capacity
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._cache: OrderedDict[tuple[int, bool], QPixmap | None] = OrderedDict()
        self._pending: set[tuple[int, bool]] = set()
        self._missed: dict[tuple[int, bool], float] = {}  # none found: when (monotonic)
        self._stale: set[tuple[int, bool]] = set()  # looks begun before look_again
        self.retry_seconds = RETRY_SECONDS
        self._relay = _Relay(self)
        self._relay.decoded.connect(self._on_decoded)

    def small(self, snapshot_id: int, folder: str | None) -> QPixmap | None:
        return self._get(snapshot_id, folder, large=False)

    @functools.cached_property
    def blank(self) -> QPixmap:
        """A transparent small thumbnail: shown where there is none (yet), so the titles
        beside the thumbnails stay in one column."""
        pixmap = QPixmap(SMALL)
        pixmap.fill(Qt.GlobalColor.transparent)
        return pixmap

    def large(self, snapshot_id: int, folder: str | None) -> QPixmap | None:
        return self._get(snapshot_id, folder, large=True)

    def has(self, snapshot_id: int, *, large: bool = False) -> bool:
        return (snapshot_id, large) in self._cache

    def _get(self, snapshot_id: int, folder: str | None, *, large: bool) -> QPixmap | None:
        key = (snapshot_id, large)
        missed = self._missed.get(key)
        if missed is not None and time.monotonic() - missed >= self.retry_seconds:
            del self._missed[key]  # not there when looked for: perhaps written since
            self._cache.pop(key, None)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if folder and key not in self._pending:
            try:
                path = self.library.abspath(f"{folder}/{SCREENSHOT_NAME}")
            except Exception:
                self._cache[key] = None
                return None
            self._pending.add(key)
            size = LARGE if large else SMALL
            kept = None if snapshot_id in self._relay.viewless else self._kept
            self._pool.start(_Decode(self._relay, snapshot_id, path, size, large, kept))
        return None

    def _kept(self, snapshot_id: int) -> bytes | None:
        return self.library.snapshots.kept_screenshot(snapshot_id)

    def look_again(self) -> None:
        """Screenshots not found are looked for again when next asked for (the rows were
        read anew: a capture pending then may be complete now); a look under way now that
        finds none is not remembered."""
        for key in self._missed:
            self._cache.pop(key, None)
        self._missed.clear()
        self._stale |= self._pending

    def _on_decoded(self, snapshot_id: int, large: bool, images: list[QImage]) -> None:
        image = images[0] if images else None
        key = (snapshot_id, large)
        self._pending.discard(key)
        if key in self._stale:
            self._stale.discard(key)
            if image is None:  # looked for before the rows were read anew: asked again
                self.ready.emit(snapshot_id)
                return
        self._cache[key] = QPixmap.fromImage(image) if image is not None else None
        if image is None:
            self._missed[key] = time.monotonic()
        while len(self._cache) > self.capacity:
            self._missed.pop(self._cache.popitem(last=False)[0], None)
        self.ready.emit(snapshot_id)  # an image, or none to be had: "Loading…" ends either way

    def wait_idle(self, msecs: int = 5000) -> bool:
        return self._pool.waitForDone(msecs)
