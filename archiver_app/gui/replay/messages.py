"""The small HTML pages the replay view shows instead of a capture (not archived, missing
file, damaged record, redirect loop, a file, a capture deleted while it was shown)."""

from __future__ import annotations

from html import escape

from archiver_app.replay.notice import INFO, message_page


def not_archived(url: str, capture_link: str) -> bytes:
    return message_page(
        "not-archived",
        "Not archived",
        f"<p><code>{escape(url)}</code> is not in your archive.</p>"
        "<p>Nothing was fetched from the live web.</p>"
        f'<a class="button" id="capture-now" href="{escape(capture_link)}">'
        "Not archived — capture it now?</a>",
        accent=INFO,
    )


def missing_file(url: str, path: str, drives: list[str]) -> bytes:
    if drives:
        where = (
            "<p>A verified copy is on "
            + " or ".join(f"the drive <b>{escape(d)}</b>" for d in drives)
            + ". Connect it and reload.</p>"
        )
    else:
        where = "<p>No drive is known to hold a copy.</p>"
    return message_page(
        "missing-file",
        "Archive file not on this computer",
        f"<p>The capture of <code>{escape(url)}</code> is stored in "
        f"<code>{escape(path)}</code>, which is not here.</p>{where}",
    )


def damaged(url: str, reason: str) -> bytes:
    return message_page(
        "damaged",
        "This capture is damaged",
        f"<p>The capture of <code>{escape(url)}</code> cannot be shown.</p>"
        f'<p class="detail">{escape(reason)}</p>',
        accent="#c53030",
    )


def redirect_loop(url: str, chain: list[str]) -> bytes:
    hops = "".join(f"<li><code>{escape(u)}</code></li>" for u in chain)
    return message_page(
        "redirect-loop",
        "This archived page redirects in a loop",
        f"<p>Following the archived redirects of <code>{escape(url)}</code> comes back to "
        f"a page already visited:</p><ol>{hops}</ol>",
        accent="#c53030",
    )


def a_file(url: str, what: str, size: str, links: dict[str, str]) -> bytes:
    """A capture the built-in browser would only download (``what``: its type in words):
    replay refuses downloads, so the tab offers ``links`` (label -> action link) instead."""
    buttons = "".join(
        f'<a class="button" id="{escape(label.split()[0].lower())}" href="{escape(link)}">'
        f"{escape(label)}</a> "
        for label, link in links.items()
    )
    return message_page(
        "file",
        "This capture is a file",
        f"<p><code>{escape(url)}</code> was archived as {escape(what)} ({escape(size)}), "
        "which the built-in browser does not show.</p>"
        '<p class="detail">Nothing was downloaded or fetched from the live web.</p>'
        f"{buttons}",
        accent=INFO,
    )


def deleted(url: str, when: str, left: int) -> bytes:
    """The capture of ``url`` made ``when`` was deleted while its tab showed it; ``left``:
    how many captures of its address remain."""
    others = (
        f"The other capture{'s' if left > 1 else ''} of this address {'are' if left > 1 else 'is'}"
        " in the timeline above."
        if left
        else "No other capture of this address is left."
    )
    return message_page(
        "deleted",
        "This capture was deleted",
        f"<p>The capture of <code>{escape(url)}</code> made on {escape(when)} was deleted"
        " from the library (in this window, another one, or on another computer sharing"
        " the library). It can no longer be shown.</p>"
        f'<p class="detail">{escape(others)}</p>',
        accent="#c53030",
    )
