"""The one way a job runs work on several threads: a bounded pool and a bounded window.

:class:`Pool` is a fixed set of named threads for one stage of a job (copying, hashing,
claiming ...). :meth:`Pool.each` and :meth:`Pool.map` run a function over a list of items:
each thread takes the next item from a shared iterator, so a list of 500 small files costs
one future per thread, not 500 (a future and a thread wake-up per item were a good part of
a small file's cost). A cancel token stops the threads taking new items; the first error
stops them too and is raised to the caller once every thread has stopped, so nothing runs
behind the caller's back. :meth:`Pool.submit` runs one task, for stages that hand work on.

:func:`ahead` runs a producer (an iterator) in a thread of its own, at most ``depth`` items
ahead of the consumer: what the producer raises reaches the consumer, and closing the
consumer's generator stops the producer and waits for it, so no thread outlives its use.

:class:`Window` keeps at most ``limit`` tasks of a pool in flight: :meth:`Window.submit`
waits for the oldest before starting one more (backpressure), and results come back in the
order the tasks were submitted.

Threads trade the GIL: a pool pays off where the work waits on a disk or hashes in C
(hashlib releases the GIL), not for short Python steps; each caller says why it uses one.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

from archiver_app.tasks import CancelToken

T = TypeVar("T")
R = TypeVar("R")


class Pool:
    """``threads`` threads named ``name-N``; close it (``with``) to wait for them."""

    def __init__(self, threads: int, name: str) -> None:
        self.threads = max(1, threads)
        self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix=name)

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        return self._executor.submit(fn, *args, **kwargs)

    def each(
        self,
        fn: Callable[[T], object],
        items: Sequence[T],
        *,
        threads: int | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        """``fn`` on every item, on ``threads`` of the pool's threads (all by default);
        see the module doc for cancel and errors."""
        self.map(fn, items, threads=threads, cancel=cancel)

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        threads: int | None = None,
        cancel: CancelToken | None = None,
    ) -> list[R]:
        """``fn`` on every item, results in the items' order; as :meth:`each`."""
        results: list[R | None] = [None] * len(items)
        numbered: Iterator[tuple[int, T]] = enumerate(items)
        lock = threading.Lock()
        stop = threading.Event()

        def drain() -> None:
            while not stop.is_set() and not (cancel is not None and cancel.cancelled):
                with lock:
                    item = next(numbered, None)
                if item is None:
                    return
                try:
                    results[item[0]] = fn(item[1])
                except BaseException:
                    stop.set()  # the others take no new item; the caller sees this error
                    raise

        n = max(1, min(threads or self.threads, self.threads, len(items)))
        tasks = [self._executor.submit(drain) for _ in range(n)]
        errors = [task.exception() for task in tasks]  # waits for every thread
        for error in errors:
            if error is not None:
                raise error
        if cancel is not None:
            cancel.raise_if_cancelled()
        return results  # type: ignore[return-value]  # every slot was filled


class Window(Generic[R]):
    """At most ``limit`` tasks on ``pool`` in flight; see the module doc."""

    def __init__(self, pool: Pool, limit: int) -> None:
        self.pool = pool
        self.limit = max(1, limit)
        self._tasks: deque[Future[R]] = deque()

    def __len__(self) -> int:
        return len(self._tasks)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> list[R]:
        """Start ``fn(*args, **kwargs)`` once fewer than ``limit`` are in flight; the
        results of the tasks that had to end first (raises what one of them raised)."""
        done = self.wait_room()
        self._tasks.append(self.pool.submit(fn, *args, **kwargs))
        return done

    def wait_room(self) -> list[R]:
        """Wait until one more task fits; the results of those that ended meanwhile."""
        return [self._tasks.popleft().result() for _ in range(len(self._tasks) - self.limit + 1)]

    def drain(self) -> list[R]:
        """Wait for every task in flight; their results, oldest first."""
        out = [task.result() for task in self._tasks]
        self._tasks.clear()
        return out


class _Raised:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


_END = object()


def ahead(source: Callable[[], Iterator[T]], depth: int, name: str) -> Generator[T, None, None]:
    """The items of ``source()``, made in a thread named ``name`` at most ``depth`` ahead;
    see the module doc."""
    handoff: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        items = source()
        try:
            for item in items:
                if not put(item):
                    return
            put(_END)
        except BaseException as exc:  # everything, KeyboardInterrupt too, goes to the caller
            put(_Raised(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while (item := handoff.get()) is not _END:
            if isinstance(item, _Raised):
                raise item.exc
            yield item
    finally:
        stop.set()
        thread.join()
