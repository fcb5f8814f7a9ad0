"""Folder layouts of a library and the lazy migration chain between them (DESIGN section 8).

Every snapshot row and every ``index.json`` sidecar carries ``fs_version``; the newest
layout's name is :data:`CURRENT_FS_VERSION`. Only the cheap names are imported here (the
library imports this package at open); the rest is imported where it is used:

- ``versions``: the chain of layouts and the pure steps between them;
- ``moves``: verified copies (copy -> verify -> fsync -> remove);
- ``sidecar``: reading any known ``index.json``, writing ours;
- ``migrate``: one snapshot to the current layout (``ensure_current_layout``,
  ``save_snapshot``) and cleanup markers; ``batch``: the same for a batch, with Core;
- ``migrator``: the background migrator (``run_migrator``, run as a ``migrate`` job);
- ``archivebox``: ``register_archivebox`` and batch import of ArchiveBox data folders;
- ``contents``: WARC records and search text of imported snapshots;
- ``orphans``, ``invalid``, ``reconcile``, ``update``: ``archiver update``.
"""

from archiver_app.layout.current import CURRENT_FS_VERSION, snapshot_folder

__all__ = ["CURRENT_FS_VERSION", "snapshot_folder"]
