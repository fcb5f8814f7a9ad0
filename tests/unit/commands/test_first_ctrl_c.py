"""The first Ctrl+C asks a command's work to end; the second interrupts at once."""

from __future__ import annotations

import os
import signal
import time

from archiver_app.commands._signals import first_ctrl_c


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # the handler runs in the main thread at the next statement


def test_the_first_ctrl_c_asks_the_second_interrupts_and_the_old_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    asked: list[int] = []
    interrupted = False
    try:
        with first_ctrl_c(lambda: asked.append(1)):
            _ctrl_c()
            assert asked == [1]  # asked, not interrupted
            _ctrl_c()
    except KeyboardInterrupt:
        interrupted = True
    assert interrupted
    assert asked == [1]
    assert signal.getsignal(signal.SIGINT) is before
