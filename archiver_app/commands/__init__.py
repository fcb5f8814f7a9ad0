"""Subcommands of ``archiver``. Every public module here has ``register(subparsers)``."""
