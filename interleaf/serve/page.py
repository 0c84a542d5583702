"""The web page at `/`: plain HTML, one script and one stylesheet, all served from this package.

Nothing is fetched from elsewhere: the Content-Security-Policy allows the page's own script and
style and this server's images and API only. Document text reaches the page as JSON and is put in
with `textContent`; the one HTML fragment inserted as HTML is the answer rendered by
interleaf/render/html.py, which escapes every character of document and model text.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import APIRouter, Request
from starlette.responses import Response

from interleaf.serve.app import server_of
from interleaf.serve.errors import ApiError

router = APIRouter()

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ASSETS = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}


@cache
def _asset(name: str) -> bytes:
    return (resources.files("interleaf.serve") / "assets" / name).read_bytes()


@router.get("/", include_in_schema=False)
def index(request: Request) -> Response:
    server = server_of(request)
    html = _asset("index.html").decode("utf-8")
    html = html.replace("{{read_access}}", server.api.read_access)
    return Response(html, media_type="text/html; charset=utf-8", headers={"Content-Security-Policy": CSP})


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    return Response(status_code=204)  # no icon; a browser asks for one anyway


@router.get("/assets/{name}", include_in_schema=False)
def asset(name: str) -> Response:
    if name not in ASSETS:
        raise ApiError(404, "not_found", f"no asset {name!r}")
    return Response(
        _asset(name), media_type=ASSETS[name], headers={"Content-Security-Policy": CSP, "Cache-Control": "no-cache"}
    )
