"""The web server: textual-serve's protocol behind the owner's guard, with a bound on sessions.

textual-serve's `Server` supplies the browser side (xterm.js and its static files) and the message
protocol between the page and the app process; this class puts the guard (`guard.make_guard`) in front
of every route, serves its own page (`page.page`), starts each tab's app from an argument list
(`session.AppSession`), refuses a WebSocket beyond `max_sessions` (503, before any process starts), and
ends every app process when its socket closes or the server stops. A client that vanishes mid-frame
costs its own session only: the failed write ends that session's relay, and its process is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
from collections.abc import Callable
from pathlib import Path

import textual_serve
from aiohttp import web
from textual_serve.server import Server, to_int

from rcs_tui.serve.guard import make_guard, secure
from rcs_tui.serve.page import SECURITY_HEADERS, page
from rcs_tui.serve.session import AppSession, Sessions

log = logging.getLogger("rcs-tui.serve")
SHUTDOWN_S = 3.0
STATICS = Path(textual_serve.__file__).resolve().parent / "static"


class OwnerServer(Server):
    """Serve one rcs-tui app (`argv`, run once per browser tab) to the holder of `token`."""

    def __init__(self, argv: list[str], *, token: str, host: str, port: int, title: str,
                 max_sessions: int) -> None:
        super().__init__(" ".join(argv), host=host, port=port, title=title, statics_path=STATICS)
        self.argv = argv
        self.token = token
        self.cookie = f"rcs_tui_serve_{secrets.token_hex(4)}"  # servers on other ports keep their own cookie
        self.sessions = Sessions(max_sessions)

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[make_guard(self.token, self.cookie)])
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def on_shutdown(self, app: web.Application) -> None:
        await self.sessions.stop_all()

    async def handle_index(self, request: web.Request) -> web.Response:
        scheme = "wss" if secure(request) else "ws"
        html = page(self.title, f"{scheme}://{request.host}/ws", to_int(request.query.get("fontsize", "16"), 16))
        return web.Response(text=html, content_type="text/html", headers=SECURITY_HEADERS)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        if self.sessions.closing:
            return web.Response(status=503, text="503: the server is stopping\n")
        if self.sessions.full:
            return web.Response(status=503, text=f"503: {self.sessions.limit} sessions are open already "
                                                 "(close a tab, or start the server with a higher --max-sessions)\n")
        websocket = web.WebSocketResponse(heartbeat=15)
        width = min(max(to_int(request.query.get("width", "80"), 80), 1), 1000)
        height = min(max(to_int(request.query.get("height", "24"), 24), 1), 1000)
        session = AppSession(self.argv, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                             close=websocket.close, download_manager=self.download_manager)
        self.sessions.running.add(session)
        try:
            await websocket.prepare(request)
            await session.start(width, height)
            await self._process_messages(websocket, session)
        except ConnectionError:
            pass
        except Exception:  # noqa: BLE001 - a bad message or a broken client ends its own session, not the server
            log.warning("session ended on an error", exc_info=True)
        finally:  # also when the server stops and cancels this handler
            try:
                await session.stop()
                with contextlib.suppress(Exception):
                    await websocket.close()
            finally:
                self.sessions.running.discard(session)  # its place is free once its process has ended
        return websocket

    async def run(self, ready: Callable[[str, int], None], stop: asyncio.Event | None = None) -> None:
        """Serve until SIGINT/SIGTERM (or `stop`); `ready(host, port)` is called once listening (the port
        the system chose when 0 was asked for)."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        # On stop, the apps are asked to quit first (`on_shutdown`); a socket whose client does not answer
        # the close is then dropped after SHUTDOWN_S rather than aiohttp's minute.
        runner = web.AppRunner(await self._make_app(), access_log=None, handle_signals=False,
                               shutdown_timeout=SHUTDOWN_S)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
            bound = runner.addresses
            ready(self.host, bound[0][1] if bound else self.port)
            await stop.wait()
        finally:
            await runner.cleanup()
