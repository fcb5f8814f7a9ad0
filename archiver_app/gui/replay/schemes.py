"""The custom URL schemes replayed pages live on, and conversion to and from them.

``http://host/path`` is shown to the page as ``archive-http://host/path`` (``https`` as
``archive-https``), so every request a replayed page makes comes back to our scheme
handler instead of the network. :func:`register_schemes` must run before the
``QApplication`` exists (Chromium reads scheme registrations once, at start); it also
applies the switches of :mod:`~archiver_app.gui.replay.isolation`, which have the same
deadline, so every entry point that can replay gets both.
"""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtWebEngineCore import QWebEngineUrlScheme

SCHEME_FOR = {"http": "archive-http", "https": "archive-https"}
ORIGINAL_FOR = {v: k for k, v in SCHEME_FOR.items()}
ACTION_HOST = "archiver.invalid"  # in-page links to the app itself (capture this page...)
_registered = False


def register_schemes() -> None:
    """Register ``archive-http`` and ``archive-https`` with QtWebEngine (idempotent).

    Both are secure (so pages keep secure-context features), CORS and fetch enabled, and
    allow neither service workers nor local file access.
    """
    global _registered  # noqa: PLW0603 - Chromium reads registrations once per process
    if _registered:
        return
    from archiver_app.gui.replay.isolation import apply_network_isolation

    apply_network_isolation()
    for name, port in (("archive-http", 80), ("archive-https", 443)):
        if QWebEngineUrlScheme.schemeByName(name.encode()).name():
            continue
        scheme = QWebEngineUrlScheme(name.encode())
        scheme.setSyntax(QWebEngineUrlScheme.Syntax.HostAndPort)
        scheme.setDefaultPort(port)
        scheme.setFlags(
            QWebEngineUrlScheme.Flag.SecureScheme
            | QWebEngineUrlScheme.Flag.CorsEnabled
            | QWebEngineUrlScheme.Flag.FetchApiAllowed
        )
        QWebEngineUrlScheme.registerScheme(scheme)
    _registered = True


def to_archive_url(url: str | QUrl) -> QUrl:
    """``http(s)://...`` as ``archive-http(s)://...``; other URLs unchanged."""
    qurl = QUrl(url)
    scheme = qurl.scheme().lower()
    if scheme in SCHEME_FOR:
        qurl.setScheme(SCHEME_FOR[scheme])
    return qurl


def to_original_url(url: str | QUrl) -> str:
    """``archive-http(s)://...`` back to ``http(s)://...`` (as text)."""
    qurl = QUrl(url)
    scheme = qurl.scheme().lower()
    if scheme in ORIGINAL_FOR:
        qurl.setScheme(ORIGINAL_FOR[scheme])
    return qurl.toString(QUrl.ComponentFormattingOption.FullyEncoded)


def is_archive_url(url: QUrl) -> bool:
    return url.scheme().lower() in ORIGINAL_FOR


def action_url(action: str, url: str) -> str:
    """A link a message page uses to ask the app for ``action`` on ``url``."""
    target = QUrl(f"archive-https://{ACTION_HOST}/{action}")
    from PySide6.QtCore import QUrlQuery

    query = QUrlQuery()
    query.addQueryItem("url", url)
    target.setQuery(query)
    return target.toString(QUrl.ComponentFormattingOption.FullyEncoded)
