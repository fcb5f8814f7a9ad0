"""Which core capabilities this build has, and why an action is disabled when one is missing.

The GUI grows with the core: capture, crawl, search, replay and mirror arrive as separate
packages. Each action asks :func:`capability` before enabling itself; a missing one leaves
the action disabled with a tooltip that says why, never a fake result. Lookups import
nothing heavy (``importlib.util.find_spec`` on the module); :func:`resolve` imports it
when the action runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Capability:
    name: str
    module: str
    attribute: str
    missing_reason: str


CAPABILITIES: dict[str, Capability] = {
    "capture": Capability(
        "capture",
        "archiver_app.capture.engine",
        "capture_urls",
        "Capturing is not available in this build yet (archiver_app.capture.engine is missing).",
    ),
    "crawl": Capability(
        "crawl",
        "archiver_app.crawl.inline",
        "run_job_inline",
        "Crawls are not available in this build yet (archiver_app.crawl is missing).",
    ),
    "job_control": Capability(
        "job_control",
        "archiver_app.crawl.jobs",
        "pause_job",
        "Job control (pause, resume, abort, retry, live rules) needs the crawl engine, "
        "which is not in this build yet.",
    ),
    "search": Capability(
        "search",
        "archiver_app.search",
        "search",
        "Using the built-in full-text index directly (archiver_app.search is not in this "
        "build yet).",
    ),
    "replay": Capability(
        "replay",
        "archiver_app.gui.replay.widget",
        "ReplayWidget",
        "Replay is not available in this build yet (archiver_app.gui.replay is missing).",
    ),
    "mirror": Capability(
        "mirror",
        "archiver_app.mirror",
        "run_mirror",
        "Mirroring to drives is not available in this build yet (archiver_app.mirror has "
        "no mirror API).",
    ),
    "verify": Capability(
        "verify",
        "archiver_app.mirror",
        "verify_destinations",
        "Verifying drives is not available in this build yet (archiver_app.mirror has no "
        "verify API).",
    ),
    "offload": Capability(
        "offload",
        "archiver_app.mirror",
        "offload",
        "Freeing laptop space is not available in this build yet (archiver_app.mirror has "
        "no offload API).",
    ),
    "destinations": Capability(
        "destinations",
        "archiver_app.mirror",
        "add_destination",
        "Adding drives is not available in this build yet (archiver_app.mirror has no "
        "destinations API).",
    ),
    "export": Capability(
        "export",
        "archiver_app.export",
        "export",
        "Exporting is not available in this build (archiver_app.export is missing).",
    ),
    "move_library": Capability(
        "move_library",
        "archiver_app.library_move",
        "move_library",
        "Moving a library is not available in this build.",
    ),
}


def resolve(name: str) -> Any | None:
    """The core callable/class behind capability ``name``, or None when absent."""
    cap = CAPABILITIES[name]
    try:
        if importlib.util.find_spec(cap.module) is None:
            return None
        module = importlib.import_module(cap.module)
    except ImportError:
        return None
    return getattr(module, cap.attribute, None)


def capability(name: str) -> tuple[bool, str]:
    """``(available, reason_if_not)`` for capability ``name``, without importing it.

    Windows ask this while they are built, so it must stay cheap: importing the capture
    engine (and with it requests, tldextract, surt) or the mirror package costs a large
    share of the launch. A module that exists counts as available; when it is already
    imported, the attribute is checked too. :func:`resolve` imports it on first use.
    """
    cap = CAPABILITIES[name]
    try:
        spec = importlib.util.find_spec(cap.module)
    except ImportError:
        spec = None
    if spec is None:
        return False, cap.missing_reason
    module = sys.modules.get(cap.module)
    if module is not None and not hasattr(module, cap.attribute):
        return False, cap.missing_reason
    return True, ""
