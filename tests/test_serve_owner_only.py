"""`rcs-tui serve` lets in only the holder of its token, from its own origin, within its session bound,
and every app process it starts ends with its socket (tested against the real server over HTTP)."""

from __future__ import annotations

import base64
import os
import socket
import stat
import struct
import time
from pathlib import Path

import aiohttp
import pytest

from rcs_tui.serve.apps import app_argv, loopback
from rcs_tui.serve.token import same_token
from tests.servefix import alive, serving
from tests.statefix import canonical, mode


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "code" / "alpha"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    return root


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "state-home"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


PATHS = ("/", "/static/js/textual.js", "/ws", "/no-such-page")


async def status_of(url: str, cookies: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> int:
    async with aiohttp.ClientSession(cookies=cookies) as http, http.get(url, headers=headers or {}) as response:
        return response.status


class TestTheToken:
    async def test_without_it_or_with_a_wrong_one_nothing_is_served_and_no_app_starts(self, project, state_home):
        with serving("--project", str(project)) as served:
            for path in PATHS:
                assert await status_of(served.base + path) == 401, path
                assert await status_of(served.base + path + "?token=x" + served.token[1:]) == 403, path
            # a WebSocket upgrade without the token, or with a wrong one, is refused before any process starts
            async with aiohttp.ClientSession() as http:
                for url in (served.base + "/ws", served.base + "/ws?token=wrong"):
                    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                        await http.ws_connect(url)
                    assert refused.value.status in (401, 403)
            time.sleep(0.3)
            assert served.children() == []

    async def test_the_printed_url_opens_the_page_and_sets_a_private_cookie(self, project, state_home):
        with serving("--project", str(project)) as served:
            async with aiohttp.ClientSession() as http, http.get(served.url) as response:
                assert response.status == 200
                html = await response.text()
                cookie = response.headers["Set-Cookie"]
                policy = response.headers["Content-Security-Policy"]
            assert f'data-session-websocket-url="ws://{served.base.split("//")[1]}/ws"' in html
            assert served.token in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert response.headers["Referrer-Policy"] == "no-referrer"
            name = cookie.split("=", 1)[0]
            # the cookie alone now lets the page's static files in, and nothing else does
            assert await status_of(served.base + "/static/js/textual.js", cookies={name: served.token}) == 200
            assert await status_of(served.base + "/static/js/textual.js", cookies={name: "x" * 43}) == 403
            assert served.children() == []  # a page is not a session: the app starts with its WebSocket

    def test_it_is_stored_for_the_owner_only_and_is_new_at_every_start(self, project, state_home):
        with serving("--project", str(project)) as first:
            token_file = state_home / "rcs-tui" / "serve-token"
            assert token_file.read_text() == first.token + "\n"
            assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
            assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
            assert str(token_file) in "".join(first.lines)
        with serving("--project", str(project)) as second:
            assert second.token != first.token and len(second.token) >= 43
            assert token_file.read_text() == second.token + "\n"

    def test_a_token_set_in_the_config_is_used_and_never_printed_by_config(self, project, state_home, tmp_path,
                                                                             run_cli):
        secret = "k" * 40
        cfg = tmp_path / "config.toml"
        cfg.write_text(f'[serve]\ntoken = "{secret}"\n')
        with serving("--project", str(project), env={"RCS_TUI_CONFIG": str(cfg)}) as served:
            assert served.token == secret
        assert not (state_home / "rcs-tui" / "serve-token").exists()
        shown = run_cli("config", "--json", env={"RCS_TUI_CONFIG": str(cfg)})
        assert shown.json["settings"]["serve.token"] == {"value": "(set)", "source": "file"}
        assert secret not in run_cli("config", env={"RCS_TUI_CONFIG": str(cfg)}).stdout

    def test_a_short_token_in_the_config_is_an_error_that_does_not_echo_it(self, run_cli, tmp_path):
        cfg = tmp_path / "config.toml"
        cfg.write_text('[serve]\ntoken = "hunter2"\n')
        res = run_cli("serve", env={"RCS_TUI_CONFIG": str(cfg)})
        assert res.code == 1 and "serve.token" in res.error and "hunter2" not in res.stderr


class TestWhoCanConnect:
    def test_another_address_than_loopback_needs_a_configured_token(self, run_cli, project, state_home):
        res = run_cli("serve", "--host", "0.0.0.0", "--project", str(project), timeout=20)
        assert res.code == 1 and "token" in res.error and "0.0.0.0" in res.error
        assert not (state_home / "rcs-tui" / "serve-token").exists()

    async def test_a_websocket_from_another_origin_is_refused_and_starts_nothing(self, project, state_home):
        with serving("--project", str(project)) as served:
            async with aiohttp.ClientSession() as http:
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.base + "/ws?token=" + served.token,
                                          headers={"Origin": "http://evil.example"})
                assert refused.value.status == 403
                time.sleep(0.3)
                assert served.children() == []
                # from its own origin the same request starts one app, which ends when the socket closes
                ws = await http.ws_connect(served.base + "/ws?token=" + served.token,
                                           headers={"Origin": served.base})
                (pid,) = served.wait_children(1)
                await ws.receive(timeout=20)
                await ws.close()
                served.wait_children(0)
                assert not alive(pid)

    async def test_sessions_beyond_the_limit_are_refused_before_any_process_starts(self, project, state_home):
        with serving("--project", str(project), "--max-sessions", "1") as served:
            async with aiohttp.ClientSession() as http:
                first = await http.ws_connect(served.base + "/ws?token=" + served.token)
                served.wait_children(1)
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.base + "/ws?token=" + served.token)
                assert refused.value.status == 503
                assert len(served.children()) == 1
                await first.close()
                served.wait_children(0)
                again = await http.ws_connect(served.base + "/ws?token=" + served.token)  # the place is free again
                served.wait_children(1)
                await again.close()
                served.wait_children(0)


def raw_websocket(base: str, token: str) -> socket.socket:
    """A WebSocket opened by hand, so the test can drop it in the middle of a frame."""
    host, port = base.split("//")[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=20)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws?token={token}&width=120&height=40 HTTP/1.1\r\nHost: {host}:{port}\r\n"
                  f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


class TestSessionsEnd:
    def test_a_client_that_vanishes_mid_frame_ends_its_app_and_the_server_carries_on(self, project, state_home):
        with serving("--project", str(project)) as served:
            sock = raw_websocket(served.base, served.token)
            (pid,) = served.wait_children(1)
            got = b""
            while len(got) < 2000:  # part of the app's first screen: the server is mid-way through its frames
                got += sock.recv(1000)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # a reset, not a close handshake
            served.wait_children(0)
            assert not alive(pid)
            assert served.proc.poll() is None
            second = raw_websocket(served.base, served.token)
            served.wait_children(1)
            assert second.recv(100)
            second.close()
            served.wait_children(0)

    def test_stopping_the_server_ends_every_app(self, project, state_home):
        with serving("--project", str(project), "--max-sessions", "2") as served:
            socks = [raw_websocket(served.base, served.token) for _ in range(2)]
            pids = served.wait_children(2)
            served.proc.terminate()
            assert served.proc.wait(20) == 0
            assert not any(alive(p) for p in pids)
            for s in socks:
                s.close()


    @pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux (the parent-death signal)")
    def test_an_app_ends_even_when_the_server_is_killed(self, project, state_home):
        with serving("--project", str(project)) as served:
            sock = raw_websocket(served.base, served.token)
            (pid,) = served.wait_children(1)
            got = b""
            while len(got) < 2000:  # the app is up and drawing
                got += sock.recv(1000)
            served.proc.kill()  # no chance to stop its apps
            served.proc.wait()
            deadline = time.monotonic() + 15
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(pid)
            sock.close()


class TestWhatEachTabRuns:
    def test_read_only_unless_actions_are_allowed(self):
        assert app_argv("fleet", readonly=True, projects=("a",))[3:] == ["fleet", "--project", "a", "--readonly"]
        assert app_argv("console", readonly=False, root="/p")[3:] == ["console", "--root", "/p", "--no-readonly"]
        assert "--readonly" in app_argv("console", readonly=True, root="/p")
        assert app_argv("hud", readonly=True, root="/p", session="s1")[3:] == ["hud", "--root", "/p",
                                                                               "--session", "s1"]

    @pytest.mark.parametrize("host, only_here", [("127.0.0.1", True), ("127.8.0.1", True), ("localhost", True),
                                                 ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                                 ("192.168.1.5", False), ("example.org", False)])
    def test_which_addresses_count_as_this_machine_only(self, host, only_here):
        assert loopback(host) is only_here

    def test_tokens_compare_whole(self):
        assert same_token("abc", "abc")
        assert not same_token("abd", "abc") and not same_token("ab", "abc") and not same_token(None, "abc")
        assert not same_token("\udcff", "abc")
