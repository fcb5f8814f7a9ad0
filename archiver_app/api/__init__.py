"""The application API: what the CLI and the GUI call, and nothing else does.

One module per area; each returns frozen views, and each edit returns a
:class:`~archiver_app.api.changes.Changes` so a front end refreshes only what changed.
The managers hang off the library, built on first use:

- ``lib.snapshots`` (:mod:`.snapshots`): one capture's details, notes, screenshot, replay
  target, the timeline of its route (:mod:`.timeline`)
- ``lib.tags``, ``lib.collections`` (:mod:`.labels`): the sidebar's lists, tag edits
- ``lib.settings`` (:mod:`.settings`): library settings
- ``lib.drives`` (:mod:`.drives`): destinations and copies, policy-aware
- ``lib.editions`` (:mod:`.editions`): a collection's editions, their coverage, review
  and release; :mod:`.deletion` behind ``lib.snapshots.delete``
- ``lib.table`` (:mod:`.table`): the captures table's filters, id stream, row pages and
  snippets (reader threads with connections of their own); :mod:`archiver_app.search`
  for ranked full-text search
- ``lib.jobs`` (:mod:`.jobs`): start any job in a child process, capture and crawl jobs,
  resume interrupted ones at start-up, pause/resume/abort/retry/cancel, rows and logs
- ``lib.imports`` (:mod:`.imports`): import jobs, ArchiveBox folders, the background
  migration; ``lib.exports`` (:mod:`.exports`): export jobs and where they may write
- ``lib.mirror`` (:mod:`.mirror`): mirror, verify (also the scheduled scrub) and offload
  jobs, destinations, the retention policy
- :mod:`.status`: the status bar's figures; :mod:`.jobs_view`: the jobs panel's rows

``gui/`` imports neither SQLAlchemy nor ``store``, nor the packages these managers wrap
(``jobs``, ``mirror``, ``importers``, ``export``, ``crawl``, ``layout``): see
``tests/unit/test_layering.py``.
Importing this package does nothing but import.
"""

from archiver_app.api.changes import Changes

__all__ = ["Changes"]
