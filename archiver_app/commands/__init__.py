"""Subcommands of ``archiver``. Every public module here has ``register(subparsers)``."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number no smaller than ``minimum`` (a count or a limit;
    ``--limit 0`` or ``-1`` is refused with the option's name instead of meaning nothing or
    everything)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        return value

    return parse


def limit_or_none(minimum: int) -> Callable[[str], int | None]:
    """An argparse ``type``: a whole number no smaller than ``minimum``, or ``none`` (no
    limit), for a limit that has a default."""
    whole = at_least(minimum)

    def parse(text: str) -> int | None:
        return None if text.strip().lower() == "none" else whole(text)

    return parse


def collection_slug(text: str) -> str:
    """An argparse ``type`` for every command's collection (``--collection SLUG``): a blank
    one names no collection, so it is refused as ``capture`` refuses it, instead of being
    read as the option left out (the default collection, or a pages list's collections)."""
    if not text.strip():
        from archiver_app.errors import InputError
        from archiver_app.validation import validate_slug

        try:
            validate_slug(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return text
