"""Fetching a response again in the page's own browser context (its cookies), for what the
recorder could not read back from the browser.

- :func:`refetch_in`: a body the browser no longer holds (a PDF its viewer took over, an
  evicted buffer), accepted only with the status the browser saw and within the byte limit;
- :func:`stand_in_from`: a whole response no recorded session reported (a worker's own
  script; what a worker asked for before its session was recorded).

Each fetch is noted in the snapshot's provenance by the recorder.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from archiver_app.capture.extract import first_line
from archiver_app.capture.recorder import Refetch, StandIn
from archiver_app.warc.httpmsg import HttpResponse


def refetch_in(context: Any, remaining_ms: Callable[[], float]) -> Refetch:
    """The recorder's :data:`Refetch`: the same request again through the page's own
    context (its cookies), accepted only with the status the browser saw (an expired
    link's 403 page is not the document) and within the byte limit."""

    async def refetch(url: str, headers: dict[str, str], status: int, limit: int) -> bytes | str:
        keep = {k: v for k, v in headers.items() if k.lower() in {"range", "accept"}}
        try:
            resp = await context.request.get(
                url, headers=keep, max_redirects=0, timeout=min(10_000, remaining_ms())
            )
        except Exception as exc:
            return first_line(exc)
        try:
            if resp.status != status:
                return f"the server answered {resp.status}, not {status}"
            length = str(resp.headers.get("content-length", "")).strip()
            if length.isdigit() and int(length) > limit:
                return f"{length} bytes, over the {limit} byte limit"
            body = bytes(await resp.body())
            if len(body) > limit:
                return f"{len(body)} bytes, over the {limit} byte limit"
            return body
        except Exception as exc:
            return first_line(exc)
        finally:
            with contextlib.suppress(Exception):
                await resp.dispose()

    return refetch


def stand_in_from(context: Any, remaining_ms: Callable[[], float], limit: int) -> StandIn:
    """The recorder's :data:`StandIn`: the URL fetched again in the page's context."""

    async def stand_in(url: str) -> tuple[HttpResponse, bytes] | str:
        try:
            resp = await context.request.get(
                url, max_redirects=0, timeout=min(10_000, remaining_ms())
            )
        except Exception as exc:
            return first_line(exc)
        try:
            body = bytes(await resp.body())
            if len(body) > limit:
                return f"{len(body)} bytes, over the {limit} byte limit"
            headers = [(h["name"], h["value"]) for h in resp.headers_array]
            return HttpResponse(resp.status, resp.status_text, headers), body
        except Exception as exc:
            return first_line(exc)
        finally:
            with contextlib.suppress(Exception):
                await resp.dispose()

    return stand_in
