"""``python -m archiver_app``: the same entry point as the ``archiver`` command."""

import multiprocessing

# Background work runs in spawned child processes (archiver_app.tasks.isolated); in a
# frozen build the child is this same executable, which must run the child's code and
# nothing else.
multiprocessing.freeze_support()

from archiver_app.cli import main  # noqa: E402

raise SystemExit(main())
