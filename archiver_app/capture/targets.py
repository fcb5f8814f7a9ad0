"""Workers' DevTools sessions, so what dedicated, shared and service workers fetch is recorded.

A worker is a DevTools target of its own: the page's ``Network`` events never show what a
worker fetches (``importScripts``, ``fetch``, a service worker's cache filling). The page's
session asks Chromium to attach to every worker the page starts, paused before its first
line runs (``Target.setAutoAttach`` with ``waitForDebuggerOnStart``); the recorder enables
``Network`` on the worker's session and only then is the worker let go
(``Runtime.runIfWaitingForDebugger``). Workers started by workers are attached the same way.
Shared workers are not children of the page: they are found with ``Target.setDiscoverTargets``
(restricted to the page's browser context) and attached as they appear, so their first
requests can be missed.

Sessions are reached through their parent in the non-flat mode (``Target.sendMessageToTarget``
/ ``receivedMessageFromTarget``): Playwright routes only its own sessions in flat mode, and a
session we could not talk to would leave the worker paused for ever.

Threading contract: used from the event loop that owns the page, like the recorder.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

Event = dict[str, Any]

#: Target types whose requests are recorded.
WORKER_TYPES = frozenset({"worker", "shared_worker", "service_worker"})


class TargetError(Exception):
    """A command sent to a worker's session failed (the worker went away, bad parameters)."""


class TargetSession:
    """A worker's DevTools session reached through ``parent`` (a Playwright CDP session or
    another :class:`TargetSession`); offers the ``send``/``on``/``remove_listener`` calls the
    recorder uses on a page's session."""

    def __init__(self, parent: Any, session_id: str, target_type: str, url: str) -> None:
        self.parent, self.session_id = parent, session_id
        self.target_type, self.url = target_type, url
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Event]] = {}
        self._listeners: dict[str, list[Callable[[Event], None]]] = {}
        self.detached = False

    async def send(self, method: str, params: Event | None = None) -> Event:
        if self.detached:
            raise TargetError(f"{self.target_type} {self.url} is gone")
        call_id = next(self._ids)
        done: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = done
        message = {"id": call_id, "method": method, "params": params or {}}
        try:
            await self.parent.send(
                "Target.sendMessageToTarget",
                {"sessionId": self.session_id, "message": json.dumps(message)},
            )
            return await done
        finally:
            self._waiting.pop(call_id, None)

    def on(self, name: str, handler: Callable[[Event], None]) -> None:
        self._listeners.setdefault(name, []).append(handler)

    def remove_listener(self, name: str, handler: Callable[[Event], None]) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._listeners[name].remove(handler)

    def dispatch(self, message: Event) -> None:
        """A message the target sent: the answer to a :meth:`send`, or an event."""
        call_id = message.get("id")
        if call_id is not None:
            waiting = self._waiting.get(int(call_id))
            if waiting is not None and not waiting.done():
                error = message.get("error")
                if error:
                    waiting.set_exception(TargetError(str(error.get("message") or error)))
                else:
                    waiting.set_result(message.get("result") or {})
            return
        for handler in list(self._listeners.get(str(message.get("method")), [])):
            handler(message.get("params") or {})

    def detach(self) -> None:
        self.detached = True
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(TargetError(f"{self.target_type} {self.url} is gone"))


#: Called with a worker's session before the worker runs (the recorder enables Network).
OnSession = Callable[[TargetSession], Awaitable[None]]


class WorkerAttacher:
    """Attaches to the workers of one page and hands each session to ``on_session``."""

    def __init__(self, on_session: OnSession, notes: list[str]) -> None:
        self.on_session = on_session
        self.notes = notes
        self.sessions: dict[str, TargetSession] = {}
        self._context_id: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._asked: set[str] = set()  # shared workers we asked to attach to

    async def watch_page(self, cdp: Any) -> None:
        """Attach to the page's workers from now on, and to its browser context's shared
        workers."""
        info = await cdp.send("Target.getTargetInfo")
        self._context_id = info.get("targetInfo", {}).get("browserContextId")
        cdp.on("Target.targetCreated", lambda ev: self._on_created(cdp, ev))
        await self._watch(cdp)
        await cdp.send("Target.setDiscoverTargets", {"discover": True})

    async def _watch(self, session: Any) -> None:
        session.on("Target.attachedToTarget", lambda ev: self._on_attached(session, ev))
        session.on("Target.receivedMessageFromTarget", self._on_message)
        session.on("Target.detachedFromTarget", self._on_detached)
        await session.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False},
        )

    def _on_created(self, cdp: Any, ev: Event) -> None:
        info = ev.get("targetInfo") or {}
        target_id = str(info.get("targetId") or "")
        if (
            info.get("type") == "shared_worker"
            and info.get("browserContextId") == self._context_id
            and target_id not in self._asked
        ):
            self._asked.add(target_id)
            self._spawn(self._quiet(cdp.send("Target.attachToTarget", {"targetId": target_id})))

    def _on_attached(self, parent: Any, ev: Event) -> None:
        info = ev.get("targetInfo") or {}
        session = TargetSession(
            parent, str(ev["sessionId"]), str(info.get("type")), str(info.get("url") or "")
        )
        self.sessions[session.session_id] = session
        self._spawn(self._start(session, record=session.target_type in WORKER_TYPES))

    async def _start(self, session: TargetSession, *, record: bool) -> None:
        """Record (workers) and watch for nested workers, then let the target run; a
        target that is not recorded (an out-of-process frame) is only let go."""
        try:
            if record:
                await self.on_session(session)
                await self._watch(session)
        except Exception as exc:
            self.notes.append(f"{session.target_type} {session.url}: not recorded ({exc})")
        await self._quiet(session.send("Runtime.runIfWaitingForDebugger"))

    def _on_message(self, ev: Event) -> None:
        session = self.sessions.get(str(ev.get("sessionId")))
        if session is None:
            return
        with contextlib.suppress(ValueError):
            session.dispatch(json.loads(ev.get("message") or "{}"))

    def _on_detached(self, ev: Event) -> None:
        session = self.sessions.get(str(ev.get("sessionId")))
        if session is not None:
            session.detach()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop the attach tasks still under way (the page is done)."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for session in self.sessions.values():
            session.detach()

    @staticmethod
    async def _quiet(awaitable: Awaitable[Any]) -> None:
        with contextlib.suppress(Exception):
            await awaitable
