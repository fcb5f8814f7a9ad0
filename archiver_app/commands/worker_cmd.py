"""``archiver worker``: run queued crawl and capture jobs until stopped (or ``--once``).

Exit status: 0 when stopped or done; 2 when the library's folder went away (the share
unmounted); 75 (EX_TEMPFAIL) when the database stayed unreachable for ``--reconnect-for``
seconds. Either way the pages it held go back to the queue when their leases expire.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from archiver_app.units import counted

if TYPE_CHECKING:
    from archiver_app.cli import Context


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "worker",
        help="run queued jobs (several pages at once in one browser)",
        description="Take queued jobs from the library and capture their pages. Several "
        "workers (also on other machines sharing a PostgreSQL database) can run at once.",
    )
    p.add_argument("--once", action="store_true", help="exit when no job is left to run")
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="pages at once")
    p.add_argument(
        "--min-free", default="256M", metavar="SIZE",
        help="pause new claims while the library disk has less free (default 256M)",
    )  # fmt: skip
    p.add_argument("--job", type=int, action="append", metavar="ID", help="only this job")
    p.add_argument(
        "--reconnect-for", type=float, default=60.0, metavar="SECONDS",
        help="when the database becomes unreachable, keep trying this long, then exit with "
        "status 75 (default 60)",
    )  # fmt: skip
    p.add_argument(
        "--heartbeat", type=float, default=5.0, metavar="SECONDS", help=argparse.SUPPRESS
    )
    p.set_defaults(func=cmd_worker)


def cmd_worker(args: argparse.Namespace, ctx: Context) -> int:
    import signal

    from archiver_app.capture.browser import require_browser
    from archiver_app.crawl.inline import capturer_factory
    from archiver_app.crawl.rules import MAX_CONCURRENCY
    from archiver_app.crawl.spec import parse_size
    from archiver_app.crawl.worker import CrawlWorker, WorkerOptions
    from archiver_app.errors import InputError, LibraryError
    from archiver_app.tasks import CancelToken, ProgressUpdate

    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise InputError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
    min_free = parse_size(args.min_free)
    require_browser()
    cancel = CancelToken()

    def stop(_signum: int, _frame: object) -> None:
        cancel.cancel()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def show(update: ProgressUpdate) -> None:
        print(f"[{update.done}] {update.message}", file=ctx.out, flush=True)

    with ctx.open_library(create=False) as lib:
        options = WorkerOptions(
            concurrency=args.concurrency,
            once=args.once,
            min_free_bytes=min_free,
            job_ids=frozenset(args.job) if args.job else None,
            heartbeat_seconds=args.heartbeat,
            reconnect_seconds=args.reconnect_for,
        )
        worker = CrawlWorker(lib, capturer_factory(lib), options, cancel=cancel, progress=show)
        print(f"worker {worker.id} started (concurrency {args.concurrency})", file=ctx.out,
              flush=True)  # fmt: skip
        stats = worker.run()
    finished = ", ".join(f"job {j} {s}" for j, s in stats.jobs_finished.items()) or "no job ended"
    print(
        f"worker stopped: {counted(stats.pages_done, 'page')} captured, "
        f"{stats.pages_failed} failed; {finished}",
        file=ctx.out,
    )
    if stats.database_problem is not None:
        from archiver_app.store.connection_loss import EXIT_UNREACHABLE

        print(
            f"archiver: error: {stats.database_problem} (for {args.reconnect_for:g} s; the "
            "worker's pages go back to the queue when their leases expire)",
            file=ctx.err,
        )
        return EXIT_UNREACHABLE
    if stats.folder_problem is not None:
        print(f"archiver: error: {stats.folder_problem.message}", file=ctx.err)
        return LibraryError.exit_code
    return 0
