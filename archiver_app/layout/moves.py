"""Verified file moves: copy -> verify (size and sha256) -> fsync -> remove the old file.

Nothing here ever calls ``rename`` across folders or relies on symlinks: a move is a copy to
a temporary sibling of the destination (hashed while it is written, fsynced, re-read and
hashed again), an atomic rename into place, and - only later, once the caller has recorded
the new place - the removal of the source. So it works across devices, and an interrupted
move leaves either the old file or both, never neither. Copying is idempotent: a
destination that already holds the same bytes is kept and the copy is skipped.

With ``link=True`` (the migrator, moving files inside one library) the "copy" is a hard
link: the new name shares the old file's data, so no byte is rewritten and removing the old
name later frees nothing. A link is not a copy, so it is verified by identity rather than by
re-reading: the new name must be the very inode of the old one (same device and inode
number, same size, and the recorded size when there is one). The data reached through it is
then provably the data the old name reached, so a hash on record is kept as it is; a file
with no hash on record is hashed once, through its new name, to record one. The new name is
made durable before the caller records the new place, and the old name is removed only
after that (checking again that the new name is the same file). Where
a link is impossible (another device, ``EXDEV``; a file system without hard links; a file
that already has other names, whose copy must stay independent of them) it falls back to
the copy.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from archiver_app.durable import (
    DestinationError,
    SourceError,
    SourceMismatch,
    is_temp,
    sync_file,
    sync_folder,
    verified_copy,
)
from archiver_app.errors import ArchiverError
from archiver_app.hashing import sha256_file


class MoveError(ArchiverError):
    """A file could not be copied and verified; the source was left untouched."""


@dataclass(frozen=True)
class CopiedFile:
    """One file copied and verified: where from, where to (relative), size and hash."""

    source: str  # relative to the source folder, '/' separated
    target: str  # relative to the target folder, '/' separated
    size: int
    sha256: str


@dataclass
class TreeCopy:
    """The result of copying a folder: the verified files and the entries refused."""

    files: list[CopiedFile] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


#: ``os.link`` errors that mean "cannot link here, copy instead".
NO_LINK_ERRNOS = frozenset(
    {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES}
)


def copy_verified(
    src: Path,
    dst: Path,
    *,
    expected_sha256: str | None = None,
    expected_size: int | None = None,
    durable: bool = True,
    link: bool = False,
    make_parent: bool = True,
) -> tuple[int, str]:
    """Copy ``src`` to ``dst`` and verify it; return ``(size, sha256)``.

    A ``dst`` that already holds the same bytes is kept (idempotent resume). A ``dst`` with
    other bytes is a conflict and raises :class:`MoveError`; so does a source whose hash is
    not ``expected_sha256``. The copy is :func:`archiver_app.durable.verified_copy`'s. With
    ``durable`` it is fsynced; without, the caller must call
    :func:`archiver_app.durable.sync_filesystem` before it records the new place (one
    ``syncfs`` per batch instead of one fsync per file). With ``link`` a same-device file
    with a single name is hard-linked instead of copied (see the module docstring); the
    caller must then only ever remove ``src``'s name, never write through it. A link is
    verified by identity: the new name must be the same inode on the same device with the
    same size (and ``expected_size``, when given); its data is read only when no hash is on
    record.
    """
    src_stat = src.stat()
    src_size = src_stat.st_size
    if make_parent:
        dst.parent.mkdir(parents=True, exist_ok=True)
    if link and src_stat.st_nlink == 1:
        linked = _link_verified(src, dst, src_stat, expected_sha256, expected_size, durable=durable)
        if linked is not None:
            return src_size, linked
    if dst.exists():
        dst_stat = dst.stat()
        if os.path.samestat(src_stat, dst_stat):  # linked by a run that was killed
            return src_size, linked_sha256(src, dst, dst_stat, expected_sha256, expected_size)
        src_sha = expected_sha256 or sha256_file(src)
        if dst_stat.st_size == src_size and sha256_file(dst) == src_sha:
            return src_size, src_sha
        raise MoveError(f"{dst} already exists with different contents; {src} was kept")
    try:
        return verified_copy(
            src,
            dst,
            expected_sha256=expected_sha256,
            durable=durable,
            keep_stat=True,
            make_parent=False,
        )
    except SourceMismatch as exc:
        raise MoveError(f"{src} does not have the recorded sha256; it was kept") from exc
    except SourceError as exc:
        raise MoveError(f"cannot copy {src} to {dst}: {exc}") from exc
    except DestinationError as exc:
        if exc.kind == "mismatch":
            raise MoveError(
                f"the copy of {src} at {dst} did not verify; the source was kept"
            ) from exc
        raise MoveError(f"cannot copy {src} to {dst}: {exc}") from exc


def _link_verified(
    src: Path,
    dst: Path,
    src_stat: os.stat_result,
    expected_sha256: str | None,
    expected_size: int | None,
    *,
    durable: bool,
) -> str | None:
    """Hard-link ``src`` at ``dst`` and verify it: the hash, or None when it must copy (or
    ``dst`` exists already: the caller verifies it)."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except FileExistsError:
        return None
    except OSError as exc:
        if exc.errno in NO_LINK_ERRNOS:
            return None
        raise MoveError(f"cannot link {src} at {dst}: {exc.strerror or exc}") from exc
    try:
        dst_stat = dst.stat()
        if not os.path.samestat(dst_stat, src_stat) or dst_stat.st_size != src_stat.st_size:
            raise MoveError(f"the link of {src} at {dst} did not verify; the source was kept")
        sha = linked_sha256(src, dst, dst_stat, expected_sha256, expected_size)
        if durable:
            sync_file(dst)
            sync_folder(dst.parent)
    except OSError as exc:
        dst.unlink(missing_ok=True)
        raise MoveError(f"cannot verify {dst}: {exc.strerror or exc}") from exc
    except MoveError:
        dst.unlink(missing_ok=True)
        raise
    return sha


def linked_sha256(
    src: str | Path,
    dst: str | Path,
    dst_stat: os.stat_result,
    expected_sha256: str | None,
    expected_size: int | None,
) -> str:
    """The hash of a new name that is the very file of the old one (same device and inode).

    A link writes no byte: the new name reaches the same inode, so the same data, as the
    old one. With a hash on record and no recorded size that disagrees, the recorded hash
    is kept and the data is not read (hashing it again would check the disk, not the
    move; that is what the mirror's scrub does). Otherwise the data is hashed once, and a
    hash on record must match.
    """
    if expected_sha256 is not None and expected_size in {None, dst_stat.st_size}:
        return expected_sha256
    sha = sha256_file(Path(dst))
    if expected_sha256 is not None and sha != expected_sha256:
        raise MoveError(f"{src} does not have the recorded sha256; it was kept")
    return sha


def iter_tree(folder: Path) -> Iterator[tuple[str, Path | None, str | None]]:
    """Every file under ``folder``: ``(relative, real path or None, refusal reason)``.

    Symlinks are followed only when they resolve to a file inside ``folder``; others are
    reported with the reason (never followed, never copied). Part files of an interrupted
    copy are ignored. Folders are visited top down, names in sorted order.
    """
    resolved_root = folder.resolve()
    yield from _walk(folder, "", resolved_root)


def _walk(
    base: Path, prefix: str, resolved_root: Path
) -> Iterator[tuple[str, Path | None, str | None]]:
    with os.scandir(base) as it:
        entries = sorted(it, key=lambda e: e.name)
    subdirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        if entry.is_dir():  # follows symlinks, as os.walk sorts them
            if entry.is_symlink():
                yield prefix + entry.name, None, "symlinked folder (not followed)"
            else:
                subdirs.append(entry)
        else:
            files.append(entry)
    for entry in files:
        if is_temp(entry.name):
            continue
        rel = prefix + entry.name
        path = base / entry.name
        if entry.is_symlink():
            target = path.resolve()
            if resolved_root not in target.parents or not target.is_file():
                yield rel, None, "symlink leading outside the folder"
                continue
            yield rel, target, None
        elif entry.is_file(follow_symlinks=False):
            yield rel, path, None
        else:
            yield rel, None, "not a regular file"
    for entry in subdirs:
        yield from _walk(base / entry.name, f"{prefix}{entry.name}/", resolved_root)


def copy_tree_verified(
    src_dir: Path,
    dst_dir: Path,
    *,
    rename: dict[str, str] | None = None,
    skip: Iterable[str] = (),
    avoid_clashes: bool = False,
    durable: bool = True,
    known_sha256: Mapping[str, str] | None = None,
    known_size: Mapping[str, int] | None = None,
    link: bool = False,
) -> TreeCopy:
    """Copy every file under ``src_dir`` into ``dst_dir``, verified, keeping relative paths.

    Args:
        rename: source relative path -> target relative path for a few files.
        skip: source relative paths not to copy (for example a sidecar rewritten later).
        avoid_clashes: put a file whose name is taken by other bytes under a suffixed
            name (``name.dup1.ext``) instead of failing.
        durable: fsync each file and folder now; otherwise see :func:`copy_verified`.
        known_sha256: source relative path -> recorded hash (``files`` rows): such files
            are copied by the kernel and hashed once, at the destination, or linked and
            not read at all (see :func:`copy_verified`).
        known_size: source relative path -> recorded size, checked against a link.
        link: hard-link instead of copying where possible (:func:`copy_verified`); a file
            reached through a symlink is always copied.
    """
    rename = rename or {}
    skipped = set(skip)
    result = TreeCopy()
    touched: set[Path] = set()
    for rel, real, reason in iter_tree(src_dir):
        if reason is not None or real is None:
            result.refused.append(f"{rel}: {reason}")
            continue
        if rel in skipped:
            continue
        target = rename.get(rel, rel)
        sha = (known_sha256 or {}).get(rel)
        if avoid_clashes:
            sha = sha or sha256_file(real)
            target = free_name(dst_dir, target, sha)
        dst = dst_dir / target
        if dst.parent not in touched:
            dst.parent.mkdir(parents=True, exist_ok=True)
            touched.add(dst.parent)
        size, sha = copy_verified(
            real,
            dst,
            expected_sha256=sha,
            expected_size=(known_size or {}).get(rel),
            durable=durable,
            link=link and real == src_dir / rel,
            make_parent=False,
        )
        result.files.append(CopiedFile(rel, target, size, sha))
    if durable:
        for folder in touched:
            sync_folder(folder)
    return result


def free_name(folder: Path, relative: str, sha256: str) -> str:
    """``relative`` if free in ``folder`` or already holding ``sha256``; else a suffixed name."""
    pure = PurePosixPath(relative)
    for n in range(1000):
        name = relative if n == 0 else str(pure.with_name(f"{pure.stem}.dup{n}{pure.suffix}"))
        path = folder / name
        if not path.exists() or sha256_file(path) == sha256:
            return name
    raise MoveError(f"too many different files named {relative} in {folder}")


def remove_verified(
    src_dir: str | Path,
    dst_dir: str | Path,
    files: Iterable[CopiedFile],
    *,
    rehash: bool,
    prune: bool = True,
) -> list[str]:
    """Remove the sources of ``files`` whose copy is in ``dst_dir``; return what was kept.

    A source is removed only when its copy exists with the right size (and hash, when
    ``rehash``, as after a crash; a copy that is the source's own inode, a hard link, is
    not re-read). With ``prune``, folders left empty are removed; others stay.
    """
    kept: list[str] = []
    src_root, dst_root = os.fspath(src_dir), os.fspath(dst_dir)
    folders: set[str] = set()
    for f in files:
        src = _join(src_root, f.source)
        dst = _join(dst_root, f.target)
        try:
            st = os.stat(dst)
            ok = stat.S_ISREG(st.st_mode) and st.st_size == f.size
            # a new name that is the old file itself (a link) holds its data by identity
            if ok and rehash and not os.path.samestat(os.lstat(src), st):
                ok = sha256_file(Path(dst)) == f.sha256
        except FileNotFoundError:
            ok = False
        except OSError:
            ok = False
        if not ok:
            if os.path.lexists(src):
                kept.append(f.source)
            continue
        with contextlib.suppress(FileNotFoundError):  # removed already
            os.unlink(src)
        folders.add(f.source.rpartition("/")[0])
    if prune:
        prune_folders(src_root, folders)
    return kept


def _join(root: str, relative: str) -> str:
    return root + os.sep + relative.replace("/", os.sep)


def prune_folders(folder: str | Path, emptied: Iterable[str]) -> None:
    """Remove ``folder`` if empty, with ``emptied`` (relative sub-folders) first, deepest
    first; if ``folder`` stays, fall back to :func:`remove_empty_dirs` for the rest."""
    root = os.fspath(folder)
    for rel in sorted({r for r in emptied if r}, key=lambda r: -r.count("/")):
        parts = rel.split("/")
        for depth in range(len(parts), 0, -1):  # a/b/c, then a/b, then a
            try:
                os.rmdir(_join(root, "/".join(parts[:depth])))
            except OSError:
                break
    try:
        os.rmdir(root)
    except FileNotFoundError:
        pass
    except OSError:  # not empty: other empty sub-folders may still be there
        remove_empty_dirs(Path(folder))


def remove_empty_dirs(folder: Path) -> None:
    """Remove ``folder`` and its sub-folders that are empty (bottom up); keep the rest."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for dirpath, _dirnames, _filenames in sorted(
        os.walk(folder, topdown=False, followlinks=False), key=lambda w: -len(w[0])
    ):
        with contextlib.suppress(OSError):  # not empty (refused entries left behind): kept
            os.rmdir(dirpath)
