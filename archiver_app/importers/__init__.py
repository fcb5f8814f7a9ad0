"""Bringing other tools' files into a library: WARC/ARC, WACZ, bookmarks, URL lists, history.

:func:`archiver_app.importers.run.import_paths` is the entry point front ends call; it
reports one :class:`~archiver_app.importers.outcome.FileOutcome` per input file, so one bad
file never hides what happened to the others.
"""
