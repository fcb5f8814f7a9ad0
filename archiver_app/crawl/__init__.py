"""Crawl jobs: seeds + scope + limits + versioned rules, a page queue, workers.

Modules:

* :mod:`~archiver_app.crawl.rules` — accept/ignore regexes, built-in ignore sets;
* :mod:`~archiver_app.crawl.scope` — page / prefix / host / domain / custom scopes;
* :mod:`~archiver_app.crawl.spec` — seeds, scope, limits of a job;
* :mod:`~archiver_app.crawl.queue` — claims, leases, attempts, discovery depths;
* :mod:`~archiver_app.crawl.jobs` — lifecycle and live rule edits (the write API);
* :mod:`~archiver_app.crawl.results` — page results, counters, a job's end and indexing;
* :mod:`~archiver_app.crawl.coverage` — the coverage report files;
* :mod:`~archiver_app.crawl.api` — queries for the CLI and the GUI (the read API);
* :mod:`~archiver_app.crawl.worker` — the worker process loop;
* :mod:`~archiver_app.crawl.fetcher` — the page fetcher protocol over the capture engine;
* :mod:`~archiver_app.crawl.inline` — run one job now, in this process.
"""
