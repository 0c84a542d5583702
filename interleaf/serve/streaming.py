"""An answer computed in a worker thread, its tokens handed to the event loop as they come.

The generator streams from the worker thread (`StreamLinker` makes image placements URLs on the
way); the request's coroutine reads the tokens from a queue and sends them as server-sent events.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from interleaf.serve.answering import Answered, Ask, StreamLinker, Urls, answer
from interleaf.serve.errors import ApiError, api_error_of


@dataclass(frozen=True)
class Token:
    text: str


@dataclass(frozen=True)
class Done:
    answered: Answered


@dataclass(frozen=True)
class Failed:
    error: ApiError


Event = Token | Done | Failed


async def answer_events(server: Any, ask: Ask, urls: Urls) -> AsyncIterator[Event]:
    """The answer's tokens as the generator writes them, then the stored answer (or the error)."""
    loop = asyncio.get_running_loop()
    tokens: asyncio.Queue[str] = asyncio.Queue()
    linker = StreamLinker(lambda text: loop.call_soon_threadsafe(tokens.put_nowait, text), urls.image)
    work = asyncio.ensure_future(server.in_worker(answer, server.state, ask, linker))
    while True:
        getter = asyncio.ensure_future(tokens.get())
        done, _ = await asyncio.wait({getter, work}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            yield Token(getter.result())
            continue
        getter.cancel()
        break
    while not tokens.empty():
        yield Token(tokens.get_nowait())
    try:
        yield Done(work.result())
    except Exception as exc:  # the stream is open: the error becomes its last event
        yield Failed(api_error_of(exc))


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event; `data` as JSON on one line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"


SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
