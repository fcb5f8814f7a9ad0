"""The jobs' one bounded pipeline: ordered results, errors and cancel stop it, backpressure."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from archiver_app.jobs.pipeline import Pool, Window
from archiver_app.tasks import Cancelled, CancelToken

pytestmark = pytest.mark.unit


def test_map_keeps_the_items_order_and_uses_one_future_per_thread() -> None:
    names: set[str] = set()

    def square(n: int) -> int:
        names.add(threading.current_thread().name)
        time.sleep(0.001 * (n % 3))  # finish out of order
        return n * n

    with Pool(4, "sq") as pool:
        assert pool.map(square, list(range(50))) == [n * n for n in range(50)]
        assert pool.map(square, []) == []
        names.clear()
        pool.each(square, list(range(20)), threads=2)
    assert len(names) <= 2 and all(n.startswith("sq") for n in names)


def test_the_first_error_stops_the_others_taking_items_and_reaches_the_caller() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        with lock:
            started.append(n)
        if n == 3:
            raise ValueError("item 3 is bad")
        time.sleep(0.002)

    with Pool(2, "err") as pool, pytest.raises(ValueError, match="item 3"):
        pool.each(work, list(range(1000)))
    assert 3 in started and len(started) < 20  # nothing ran on behind the error


def test_cancel_stops_taking_items_and_raises_cancelled() -> None:
    cancel = CancelToken()
    done: list[int] = []

    def work(n: int) -> None:
        if n == 5:
            cancel.cancel()
        done.append(n)

    with Pool(1, "cancel") as pool, pytest.raises(Cancelled):
        pool.each(work, list(range(100)), cancel=cancel)
    assert done == list(range(6))


def test_a_window_keeps_at_most_its_limit_in_flight_and_returns_results_in_order() -> None:
    running = 0
    most = 0
    lock = threading.Lock()
    gate = threading.Event()

    def task(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        gate.wait(0.01)
        with lock:
            running -= 1
        return n

    results: list[int] = []
    with Pool(8, "win") as pool:
        window: Window[int] = Window(pool, 3)
        for n in range(12):
            results += window.submit(task, n)
            assert len(window) <= 3
        results += window.drain()
    assert results == list(range(12)) and most <= 3


def test_ahead_produces_at_most_depth_ahead_raises_and_stops_when_closed() -> None:
    from archiver_app.jobs.pipeline import ahead

    made: list[int] = []
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            for n in range(100):
                made.append(n)
                yield n
                if n == 50:
                    raise ValueError("broken at 50")
        finally:
            closed.set()

    items = ahead(source, 3, "ahead-test")
    assert next(items) == 0
    time.sleep(0.2)  # the producer runs on until the hand-off is full
    assert len(made) <= 1 + 3 + 1  # the one taken, the queue, the one waiting to go in
    items.close()  # the consumer is done: the producer stops, its source is closed
    assert closed.is_set() and not any(t.name == "ahead-test" for t in threading.enumerate())
    with pytest.raises(ValueError, match="broken at 50"):
        list(ahead(source, 3, "ahead-test"))
