"""Watched pages: schedules and due re-captures (see :mod:`archiver_app.watch.schedule`)."""
