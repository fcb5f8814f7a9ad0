"""Editions: a frozen, reviewed, citable release of a collection, with its coverage.

An edition is a collection's archive over a period (a year, or any date range), as
HealthArchive builds its annual editions:

* ``models.py``: the tables (``editions``, ``edition_targets`` — the target ledger —,
  ``edition_members``, ``edition_gaps``);
* ``states.py``: the lifecycle (planned -> in_progress -> search_ready -> research_ready,
  needs_review) and the one function that decides every transition;
* ``ledger.py``: which URLs were intended (job seeds and pages, imported lists), what became
  of each, and which capture represents it;
* ``coverage.py``: intended / captured / failed / excluded, overall and per domain, as
  JSON, Markdown and the ledger as CSV;
* ``service.py``: create, refresh, explain a gap, accept, reopen, the frozen checks that
  deletion and offload ask, and the damage hook that verify calls;
* ``release.py``: one WACZ of the members with the reports and a bibliography beside it.

Nothing here imports Qt; front ends call ``lib.editions`` (:mod:`archiver_app.api.editions`).
Importing this package imports nothing else: ``store.models`` imports ``models`` from it.
"""
