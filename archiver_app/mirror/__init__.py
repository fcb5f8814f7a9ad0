"""Verified copies on external drives under a retention policy.

The public surface for front ends (CLI, GUI drives panel, replay and export):

- destinations: :func:`add_destination`, :func:`find_mounted`, :func:`scan_markers`
- policy: :func:`effective_policy`, :func:`set_policy`
- runs: :func:`run_mirror` (plan with ``dry_run``), :func:`verify_destinations` (scrub),
  :func:`verify_library` (the laptop's own copies), :func:`scheduled_scrub` (whatever
  :func:`scrubs_due` names, run by the app while idle),
  :func:`restore` / :func:`restore_snapshot` (raise :class:`DriveNotMounted` naming the
  drives to plug in); offloading is :func:`archiver_app.mirror.offload.offload` (the package
  has no ``offload`` name: it would be the module once any of its functions is loaded)
- views: :func:`list_destinations`, :func:`snapshot_copies`
- outcomes (:mod:`archiver_app.mirror.outcomes`): why a drive stopped or was skipped
  (``StopReason``), how each copy ended (``CopyResult``), why a file stays short
  (``Shortfall``); ``MirrorResult.policy_holds`` says whether every file has its copies

No name here is also a submodule's: importing the submodule would replace it with the
module.

Importing this package loads none of its modules: each name is imported on first use
(PEP 562), so a front end reading one view (``mirror.status``) does not load the copier.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from archiver_app.mirror.destinations import add_destination, find_mounted
    from archiver_app.mirror.mounts import scan_markers
    from archiver_app.mirror.offload import parse_age, restore, restore_snapshot
    from archiver_app.mirror.policy import Policy, effective_policy, set_policy
    from archiver_app.mirror.run import run_mirror
    from archiver_app.mirror.scrub import DriveNotMounted, verify_destinations, verify_library
    from archiver_app.mirror.scrub_all import scheduled_scrub, scrubs_due, verify_all
    from archiver_app.mirror.status import list_destinations, snapshot_copies

#: Public name -> (module, attribute).
_WHERE = {
    "add_destination": ("destinations", "add_destination"),
    "find_mounted": ("destinations", "find_mounted"),
    "scan_markers": ("mounts", "scan_markers"),
    "parse_age": ("offload", "parse_age"),
    "restore": ("offload", "restore"),
    "restore_snapshot": ("offload", "restore_snapshot"),
    "Policy": ("policy", "Policy"),
    "effective_policy": ("policy", "effective_policy"),
    "set_policy": ("policy", "set_policy"),
    "run_mirror": ("run", "run_mirror"),
    "DriveNotMounted": ("scrub", "DriveNotMounted"),
    "scheduled_scrub": ("scrub_all", "scheduled_scrub"),
    "scrubs_due": ("scrub_all", "scrubs_due"),
    "verify_all": ("scrub_all", "verify_all"),
    "verify_destinations": ("scrub", "verify_destinations"),
    "verify_library": ("scrub", "verify_library"),
    "list_destinations": ("status", "list_destinations"),
    "snapshot_copies": ("status", "snapshot_copies"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value
    return value


__all__ = [
    "DriveNotMounted",
    "Policy",
    "add_destination",
    "effective_policy",
    "find_mounted",
    "list_destinations",
    "parse_age",
    "restore",
    "restore_snapshot",
    "run_mirror",
    "scan_markers",
    "scheduled_scrub",
    "scrubs_due",
    "set_policy",
    "snapshot_copies",
    "verify_all",
    "verify_destinations",
    "verify_library",
]
