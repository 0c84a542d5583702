"""The ASGI application: FastAPI over one warehouse, its index loaded before the first request.

`create_app(root, settings)` builds it; `interleaf serve` runs it with uvicorn. Start-up loads the
index and the published documents (explicitly, so the first question is not the one that pays for
it), a watcher loads them again whenever an ingest publishes, and shutdown stops the upload queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from interleaf.config import Settings
from interleaf.errors import InterleafError
from interleaf.serve.errors import ApiError, api_error_of
from interleaf.serve.jobs import Jobs
from interleaf.serve.keys import LiveKeys
from interleaf.serve.limits import RateLimiter
from interleaf.serve.state import ServerState

log = logging.getLogger("interleaf.serve")
T = TypeVar("T")
_BEARER = {"WWW-Authenticate": 'Bearer realm="interleaf"'}
# every response: no sniffing, no referrer, never framed
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class Server:
    """Everything a request handler needs: the state, keys, limits, jobs and the worker limit."""

    def __init__(self, root: Path, settings: Settings) -> None:
        api = settings.serve.api
        self.api = api
        self.state = ServerState(root, settings)
        self.keys = LiveKeys(api, root)
        self.limiter = RateLimiter(api.rate_limit.per_minute, api.rate_limit.burst)
        self.jobs = Jobs(self.state)
        self.answering = anyio.CapacityLimiter(api.answer_workers)

    async def in_worker(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work (an answer, a page render) in a worker thread, at most `answer_workers` at once."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.answering)

    # -- who is asking -----------------------------------------------------------------------------
    def client(self, request: Request, need_key: bool) -> str:
        """The caller's rate-limit identity; raises 401 (no key where one is needed), 403 (a key
        that is not valid) or 429 (over the rate)."""
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise ApiError(401, "bad_authorization", "send the API key as `Authorization: Bearer <key>`", _BEARER)
            key = self.keys.ring.identify(token.strip())
            if key is None and need_key:
                raise ApiError(403, "invalid_key", "the API key is not valid on this server")
            # open reading: OpenAI clients must send some key, so one this server does not know reads
            # as no key at all (rate-limited by address); it still opens nothing that needs a key
            client = f"key:{key.name}" if key else f"addr:{request.client.host if request.client else 'unknown'}"
        elif need_key:
            hint = "" if self.keys.ring else " (none is configured: `interleaf serve --new-key NAME` makes one)"
            raise ApiError(401, "missing_key", f"this needs an API key: `Authorization: Bearer <key>`{hint}", _BEARER)
        else:
            client = f"addr:{request.client.host if request.client else 'unknown'}"
        wait = self.limiter.take(client)
        if wait is not None:
            raise ApiError(
                429, "rate_limited", f"too many requests: retry in {wait:.1f} s", {"Retry-After": str(math.ceil(wait))}
            )
        return client

    def reader(self, request: Request) -> str:
        return self.client(request, self.api.read_access == "keyed")

    def writer(self, request: Request) -> str:
        return self.client(request, True)


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers | SECURITY_HEADERS)


async def _watch(server: Server) -> None:
    """Load the index again whenever an ingest publishes (uploads, `make serve`, a shell)."""
    while True:
        await asyncio.sleep(server.api.reload_poll_s)
        try:
            if await anyio.to_thread.run_sync(server.state.refresh):
                log.info("an ingest published: index and documents loaded again")
        except (InterleafError, OSError, ValueError) as exc:  # the old index stays in service
            log.warning("reload failed: %s", exc)


def create_app(root: Path, settings: Settings) -> FastAPI:
    from interleaf.serve import openai_routes, page, routes

    server = Server(root, settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(server.state.warm_up)
        watcher = asyncio.create_task(_watch(server))
        try:
            yield
        finally:
            watcher.cancel()
            server.jobs.stop()

    app = FastAPI(
        title="Interleaf",
        summary="Answers from your documents, with their figures and tables, every claim cited",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's docs pages load their scripts from a CDN: nothing here fetches from elsewhere
        redoc_url=None,  # the schema itself is at /openapi.json
    )
    app.state.server = server

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(InterleafError)
    async def _interleaf_error(request: Request, exc: InterleafError) -> JSONResponse:
        return error_response(api_error_of(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return error_response(ApiError(422, "invalid_request", problems))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(ApiError(exc.status_code, kind, f"{exc.detail}: {request.method} {request.url.path}"))

    @app.middleware("http")
    async def _headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    if settings.serve.api.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.serve.api.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )

    app.include_router(routes.router)
    app.include_router(openai_routes.router)
    app.include_router(page.router)
    return app


def server_of(request: Request) -> Server:
    return request.app.state.server
