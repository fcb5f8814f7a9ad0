"""The text of a page's frames in a comparison: counted on both sides, or on neither.

A capture's page text holds the text the page shows in its frames after its own, and its
provenance says where that begins (``text_frames_at``). A capture made before frames were
read (a page saved while browsing, too, until then) and an import hold no such mark, and
their text may lack the frames' text: compared with a capture that holds it, the frames'
text read as added though no frame changed. So when only one of two captures marks its
frames' text and the other's text does not end with the same, the frames' text is left out
of the one that holds it (a note says so), and both sides compare the same text.
"""

from __future__ import annotations

from archiver_app.capture.extract import FRAMES_AT
from archiver_app.compare.text import normalise
from archiver_app.store.models import Snapshot


def frames_at(snap: Snapshot) -> int | None:
    """Where the frames' text starts in the capture's text (None: not marked)."""
    value = (snap.provenance or {}).get(FRAMES_AT)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def same_text(
    old: Snapshot, old_text: str, new: Snapshot, new_text: str, notes: list[str]
) -> tuple[str, str]:
    """The two captures' texts as compared: with the frames' text on both sides, or on
    neither (see the module's docstring)."""
    at_old, at_new = frames_at(old), frames_at(new)
    if at_new is not None and at_old is None:
        marked, other, own = new, old, _own_text(new_text, at_new, old_text)
    elif at_old is not None and at_new is None:
        marked, other, own = old, new, _own_text(old_text, at_old, new_text)
    else:
        return old_text, new_text
    if own is None:
        return old_text, new_text
    notes.append(
        f"capture {other.id} holds no text of the page's frames (made before frames were "
        f"read, or imported): capture {marked.id}'s is left out"
    )
    return (old_text, own) if marked is new else (own, new_text)


def _own_text(text: str, at: int, other_text: str) -> str | None:
    """``text`` without its frames' text (from ``at``); None when it has none, or when
    ``other_text`` ends with the same (it holds the frames' text too)."""
    framed = normalise(text[at:])
    if not framed or normalise(other_text)[-len(framed) :] == framed:
        return None
    return text[:at]
