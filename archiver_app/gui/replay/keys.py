"""The replay tab's own keys, bound from here by the tab and listed from here by Help ▸
Keyboard Shortcuts (this module loads no web engine).

The window's Find (Ctrl+F) finds in the page of the replay in front: it is in the menus.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

BACK = QKeySequence.StandardKey.Back  # Alt+Left
FORWARD = QKeySequence.StandardKey.Forward  # Alt+Right
OWN_BROWSER = "Ctrl+Shift+O"
OWN_BROWSER_TEXT = "Open in &My Browser"
PREVIOUS_MATCH = "Shift+Return"  # in the find bar; Return finds the next


def tab_shortcuts() -> list[tuple[str, str]]:
    """(command, keys as this platform writes them) of a replay tab, for the help."""
    native = QKeySequence.SequenceFormat.NativeText

    def keys(key: QKeySequence.StandardKey | str) -> str:
        return QKeySequence(key).toString(native)

    return [
        ("Back", keys(BACK)),
        ("Forward", keys(FORWARD)),
        (OWN_BROWSER_TEXT.replace("&", ""), keys(OWN_BROWSER)),
        ("Find: next match / previous match", f"{keys('Return')} / {keys(PREVIOUS_MATCH)}"),
    ]
