"""Folder layouts of a library and the lazy migration chain between them (DESIGN section 8).

Every snapshot row and every ``index.json`` sidecar carries ``fs_version``; the newest
layout's name is :data:`CURRENT_FS_VERSION`.
"""

from archiver_app.layout.current import CURRENT_FS_VERSION, snapshot_folder

__all__ = ["CURRENT_FS_VERSION", "snapshot_folder"]
