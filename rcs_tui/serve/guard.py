"""Who may talk to the server: the one holding the token, from the server's own origin.

Every request (the page, the static files, the WebSocket, an unknown path) passes here before any
handler runs, so nothing is served and no app process starts without the token. The token comes in the
URL (`?token=…`, as printed at start) or in the cookie the first authenticated page sets (HttpOnly,
SameSite=Strict), which lets the page's static files and WebSocket in without the token in their URLs.
No token: 401. A wrong one: 403. A WebSocket whose `Origin` is not this server's (as the browser
addressed it, the `Host` header) is refused with 403: another site's page cannot drive a session even
in a browser that holds the cookie.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from rcs_tui.serve.token import same_token

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def secure(request: web.Request) -> bool:
    """Whether the browser reached us over TLS: directly, or through a proxy that says so."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"


def same_origin(request: web.Request) -> bool:
    """A request without `Origin` (not sent by a browser) passes; one with it must name this host and port."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc.lower() == request.host.lower()


def make_guard(token: str, cookie: str) -> Middleware:
    """The middleware that lets only the owner in; `cookie` is the name of the cookie that carries the token."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        in_url = request.query.get("token")
        given = in_url if in_url is not None else request.cookies.get(cookie)
        if given is None:
            return web.Response(status=401, text="401: this server needs its token: open the URL `rcs-tui serve` "
                                                 "printed (the token is also in rcs-tui's state directory)\n")
        if not same_token(given, token):
            return web.Response(status=403, text="403: wrong token\n")
        if request.path == "/ws" and not same_origin(request):
            return web.Response(status=403, text="403: a WebSocket from another origin\n")
        response = await handler(request)
        if in_url is not None and request.path == "/" and isinstance(response, web.Response):
            response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/", secure=secure(request))
        return response

    return guard
