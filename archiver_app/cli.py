"""Command line: ``archiver`` opens the GUI; ``archiver <command>`` does everything else.

Each module in :mod:`archiver_app.commands` adds its own subcommands through a
``register(subparsers)`` function, so features add commands without editing this file.
Command modules import their heavy dependencies inside their functions, so that
``archiver --version`` and ``--help`` start fast. Errors the user can act on
(:class:`ArchiverError`) print one line and exit non-zero.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from archiver_app import __version__, commands
from archiver_app.errors import ArchiverError, library_busy
from archiver_app.paths import resolve_library_root

if TYPE_CHECKING:
    from archiver_app.library import Library

DATABASE_URL_ENV = "ARCHIVER_DATABASE_URL"


@dataclass
class Context:
    """What every command gets: where the library is, and where to print."""

    library_root: Path
    database_url: str | None
    out: TextIO
    err: TextIO

    def open_library(
        self, *, create: bool = False, announce: bool = True, start_over: bool = False
    ) -> Library:
        """The library; ``create``: a new one where there is none, said on stderr unless
        ``announce`` is False (a mistyped ``--library`` must not send work to a stray
        library unnoticed). ``start_over``: even where this computer knew a library that
        is not there now (``init`` only: elsewhere that is an unmounted drive or share)."""
        from archiver_app.library import Library, check_library_folder

        root = self.library_root
        new = (
            create
            and self.database_url is None
            and check_library_folder(root, create=True, start_over=start_over)
        )
        lib = Library.open(
            root, create=create, database_url=self.database_url, start_over=start_over
        )
        if new and announce:
            print(f"archiver: no library was at {lib.root}: created a new one there", file=self.err)
        if lib.upgraded is not None:
            print(f"archiver: {lib.upgraded.message}", file=self.err)
        return lib


#: Errors of the place written to, not of Archiver: said in one line, with no traceback.
_PLACE_ERRORS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


def _writing_temp(exc: OSError) -> bool:
    from archiver_app.durable import is_temp

    return bool(exc.filename) and is_temp(str(exc.filename))


def place_error(exc: OSError) -> str:
    """``exc`` as a user reads it: the folder (a temporary file's name means nothing)."""
    from archiver_app.durable import is_temp

    where = Path(str(exc.filename)) if exc.filename else None
    if where is not None and is_temp(where.name):
        where = where.parent
    return f"{exc.strerror or exc}" + (f": {where}" if where is not None else "")


def command_modules() -> list[str]:
    return sorted(
        f"{commands.__name__}.{m.name}"
        for m in pkgutil.iter_modules(commands.__path__)
        if not m.name.startswith("_")
    )


class _Parser(argparse.ArgumentParser):
    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        if getattr(parsed, "command", None) == "search" and any(a.startswith("-") for a in extra):
            # `archiver search -word`: the only command whose words may start with '-'
            self.error(
                f"unrecognized arguments: {' '.join(extra)} (a word starting with '-' is read "
                "as an option: put -- before the words, as in: archiver search -- -word)"
            )
        return parsed, extra

    def error(self, message: str) -> NoReturn:
        number = re.search(r"invalid choice: '(\d+)'", message)
        if number and self.prog.endswith(" job"):  # `archiver job 5`
            message += f" (to see job {number[1]}: archiver job show {number[1]})"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="archiver",
        description="Personal web archiving: capture, replay offline, search, mirror to drives. "
        "Without a command, opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"archiver {__version__}")
    add_library_options(parser, default=None)
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="open the main window offscreen, check it, and exit (for packaged builds)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules():
        importlib.import_module(name).register(sub)
    for command in _all_subparsers(parser):
        # Users type ``archiver init --library PATH`` as often as ``archiver --library PATH
        # init``: every command takes both options too. SUPPRESS keeps a value given before
        # the command when none is given after it.
        add_library_options(command, default=argparse.SUPPRESS)
    return parser


def add_library_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """``--library`` and ``--database-url``, on the main parser and on every command."""
    parser.add_argument(
        "--library",
        metavar="PATH",
        default=default,
        help="library folder (default: $ARCHIVER_LIBRARY, else the per-user data folder)",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        default=default,
        help=f"keep the library's database in PostgreSQL (postgresql://...; "
        f"default: ${DATABASE_URL_ENV}, else library.db in the library folder)",
    )


def _all_subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command's parser, nested ones (``drives verify``) included."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.append(child)
                found.extend(_all_subparsers(child))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    ctx = Context(
        library_root=resolve_library_root(args.library),
        database_url=args.database_url or os.environ.get(DATABASE_URL_ENV),
        out=sys.stdout,
        err=sys.stderr,
    )
    from archiver_app.library_use import name_this_process

    # what another process's refusal calls this one while it has a library open
    name_this_process("Archiver" if args.command is None else f"archiver {args.command}")
    try:
        if args.command is None:
            from archiver_app.gui.app import run_gui

            return run_gui(ctx.library_root, ctx.database_url, self_test=args.self_test)
        result: int = args.func(args, ctx)
        return result
    except ArchiverError as exc:
        print(f"archiver: error: {exc}", file=ctx.err)
        return exc.exit_code
    except KeyboardInterrupt:
        print("archiver: interrupted", file=ctx.err)
        return 130
    except BrokenPipeError:
        # `archiver search x | head`: the reader left; say nothing more, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:
        if exc.errno not in _PLACE_ERRORS and not _writing_temp(exc):
            raise
        print(f"archiver: error: {place_error(exc)}", file=ctx.err)
        return 1
    except Exception as exc:  # the database lost or held by another process: one line
        from archiver_app.store.connection_loss import (
            EXIT_UNREACHABLE,
            lost_connection,
            unreachable_message,
        )

        if (busy := library_busy(exc)) is not None:
            print(f"archiver: error: {busy}", file=ctx.err)
            return busy.exit_code
        if not lost_connection(exc):
            raise
        print(f"archiver: error: {unreachable_message(exc)}", file=ctx.err)
        return EXIT_UNREACHABLE
