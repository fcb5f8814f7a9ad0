"""Hard-link moves of whole snapshot folders, with few system calls and no pathlib.

The migrator moves thousands of snapshots inside one library; :func:`link_tree_verified` is
:func:`layout.moves.copy_tree_verified` with ``link=True`` written for that case: it walks
the old folder once with ``scandir`` (string paths, sorted like
:func:`layout.moves.iter_tree`), creates each new folder once and makes each new name with
one ``link`` and one ``stat``:

- the new name must be the inode the old folder's entry named when it was listed (same
  inode number on the same file system: ``link`` fails with ``EXDEV`` otherwise) and it
  must have exactly two names (the old one and the new one). That proves it reaches the
  very bytes of the old name: a link is not a copy, nothing was written, so there is
  nothing to re-read. Its hash on record (``files`` rows) is kept; a file with no hash on
  record, or whose recorded size disagrees, is hashed once through its new name
  (:func:`layout.moves.copy_verified` documents the rule);
- anything else - a name that exists already (a resumed run), a file with other names, a
  source replaced meanwhile, another device, symlinks, special files - goes through
  :func:`layout.moves.copy_verified` or is refused exactly as ``copy_tree_verified``
  would.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from archiver_app.durable import is_temp, sweep_leftovers, sync_file, sync_folder
from archiver_app.layout.moves import (
    NO_LINK_ERRNOS,
    CopiedFile,
    MoveError,
    TreeCopy,
    copy_verified,
    linked_sha256,
)


def link_tree_verified(
    src_dir: Path,
    dst_dir: Path,
    *,
    skip: Iterable[str] = (),
    known_sha256: Mapping[str, str] | None = None,
    known_size: Mapping[str, int] | None = None,
    durable: bool = True,
) -> TreeCopy:
    """Give every file under ``src_dir`` a verified second name under ``dst_dir``.

    The same result as ``copy_tree_verified(src_dir, dst_dir, skip=skip, link=True, ...)``
    (files in the same order, the same refusals), faster. Without ``durable`` the caller
    must :func:`archiver_app.durable.sync_filesystem` before it records the new place.

    Raises:
        MoveError: a file could not be linked or copied and verified; names already made
            stay (a rerun verifies and reuses them), the old ones are untouched.
    """
    walker = _LinkWalk(
        os.fspath(src_dir),
        os.fspath(dst_dir),
        frozenset(skip),
        known_sha256 or {},
        known_size or {},
        durable,
    )
    walker.walk("")
    if durable:
        for folder in walker.made:
            sync_folder(folder)
            sync_folder(os.path.dirname(folder))
    return walker.result


class _LinkWalk:
    def __init__(  # noqa: PLR0917 - private, one call site
        self,
        src_root: str,
        dst_root: str,
        skip: frozenset[str],
        known_sha256: Mapping[str, str],
        known_size: Mapping[str, int],
        durable: bool,
    ) -> None:
        self.src_root, self.dst_root = src_root, dst_root
        self.skip, self.known_sha256, self.known_size = skip, known_sha256, known_size
        self.durable = durable
        self.result = TreeCopy()
        self.made: list[str] = []  # new folders, to fsync when durable
        self.ready: set[str] = set()  # folders known to exist
        self.resolved_root: Path | None = None

    def walk(self, prefix: str) -> None:
        folder = self.src_root + os.sep + prefix.replace("/", os.sep) if prefix else self.src_root
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        subdirs: list[str] = []
        for entry in entries:
            if entry.is_dir():  # follows symlinks, as iter_tree does
                if entry.is_symlink():
                    self.result.refused.append(
                        f"{prefix}{entry.name}: symlinked folder (not followed)"
                    )
                else:
                    subdirs.append(entry.name)
            elif not is_temp(entry.name):
                self.file(prefix, entry)
        for name in subdirs:
            self.walk(f"{prefix}{name}/")

    def file(self, prefix: str, entry: os.DirEntry[str]) -> None:
        rel = prefix + entry.name
        if entry.is_symlink():
            target = Path(entry.path).resolve()
            if self.resolved_root is None:
                self.resolved_root = Path(self.src_root).resolve()
            if self.resolved_root not in target.parents or not target.is_file():
                self.result.refused.append(f"{rel}: symlink leading outside the folder")
            elif rel not in self.skip:  # content inside the folder: an independent copy
                self.copy(rel, target, link=False)
            return
        if not entry.is_file(follow_symlinks=False):
            self.result.refused.append(f"{rel}: not a regular file")
            return
        if rel in self.skip:
            return
        dst = self.dst_path(rel)
        try:
            os.link(entry.path, dst, follow_symlinks=False)
        except FileExistsError:  # made by a run that was killed: verified the long way
            self.copy(rel, Path(entry.path), link=True)
            return
        except OSError as exc:
            if exc.errno not in NO_LINK_ERRNOS:
                raise MoveError(f"cannot link {entry.path}: {exc.strerror or exc}") from exc
            self.copy(rel, Path(entry.path), link=False)
            return
        try:
            st = os.stat(dst)
            if st.st_ino != entry.inode() or st.st_nlink != 2:
                # replaced meanwhile, or a file with other names: an independent copy
                os.unlink(dst)
                self.copy(rel, Path(entry.path), link=False)
                return
            sha = linked_sha256(
                entry.path,
                dst,
                st,
                self.known_sha256.get(rel),
                self.known_size.get(rel),
            )
            if self.durable:
                sync_file(dst)
        except (OSError, MoveError) as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(dst)
            if isinstance(exc, MoveError):
                raise
            raise MoveError(f"cannot verify {dst}: {exc.strerror or exc}") from exc
        self.result.files.append(CopiedFile(rel, rel, st.st_size, sha))

    def dst_path(self, rel: str) -> str:
        """The new name of ``rel``; its folder exists when this returns."""
        head, _, _name = rel.rpartition("/")
        folder = self.dst_root + os.sep + head.replace("/", os.sep) if head else self.dst_root
        if folder not in self.ready:
            self.make_folder(folder)
        return folder + os.sep + rel.rpartition("/")[2]

    def make_folder(self, folder: str) -> None:
        try:
            os.mkdir(folder)
        except FileExistsError:  # a file there makes the link fail: reported then
            # made by a run that was killed, whose half-written files were never installed;
            # a concurrent migrator of the same row loses its temporary file here, fails
            # that batch and leaves the row to be retried (it never loses a final file)
            sweep_leftovers(folder, older_than=0)
        except FileNotFoundError:  # its parents are new too
            missing = [folder]
            while not os.path.isdir(parent := os.path.dirname(missing[-1])):
                missing.append(parent)
            os.makedirs(folder, exist_ok=True)
            self.made += missing
        else:
            self.made.append(folder)
        self.ready.add(folder)

    def copy(self, rel: str, real: Path, *, link: bool) -> None:
        dst = Path(self.dst_path(rel))
        size, sha = copy_verified(
            real,
            dst,
            expected_sha256=self.known_sha256.get(rel),
            expected_size=self.known_size.get(rel),
            durable=self.durable,
            link=link,
            make_parent=False,
        )
        self.result.files.append(CopiedFile(rel, rel, size, sha))
