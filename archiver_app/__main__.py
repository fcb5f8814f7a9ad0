"""``python -m archiver_app``: the same entry point as the ``archiver`` command."""

from archiver_app.cli import main

raise SystemExit(main())
