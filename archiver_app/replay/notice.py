"""The small HTML page replay shows instead of a capture: one style for the app's replay
view (:mod:`archiver_app.gui.replay.messages`) and ``archiver serve`` (:mod:`.files`)."""

from __future__ import annotations

from html import escape

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{head_title}</title>
<style>
 body {{ font: 15px/1.5 system-ui, sans-serif; color: #222; background: #f6f6f4;
        margin: 0; display: flex; justify-content: center; }}
 main {{ max-width: 44em; margin: 4em 1.5em; padding: 1.5em 2em; background: #fff;
        border: 1px solid #ddd; border-left: 6px solid {accent}; border-radius: 6px; }}
 h1 {{ font-size: 1.3em; margin: 0 0 .5em; }}
 code {{ word-break: break-all; background: #f0f0ee; padding: 0 .2em; }}
 a.button {{ display: inline-block; margin-top: 1em; padding: .4em 1em; background: #2b6cb0;
        color: #fff; border-radius: 4px; text-decoration: none; }}
 .detail {{ color: #666; font-size: .9em; }}
</style></head>
<body><main id="archiver-message" data-kind="{kind}"><h1>{title}</h1>{body}</main></body></html>
"""

#: The accent of a page that reports a problem; :data:`INFO` for one that only informs.
WARNING = "#c05621"
INFO = "#2b6cb0"


def message_page(
    kind: str, title: str, body_html: str, *, accent: str = WARNING, head_title: str = ""
) -> bytes:
    """The page ``kind`` (its ``data-kind``, which tests and scripts read) headed ``title``
    over ``body_html`` (already escaped); ``head_title`` names the tab (``title`` if empty)."""
    return _PAGE.format(
        kind=escape(kind),
        title=escape(title),
        head_title=escape(head_title or title),
        body=body_html,
        accent=accent,
    ).encode("utf-8")
