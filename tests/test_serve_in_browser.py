"""`rcs-tui serve` in a real browser (the system Chromium, driven by Playwright): the printed URL shows the
fleet and its live changes; strangers and other origins get nothing; read-only offers no write action; a
closed tab leaves no process behind."""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path

import pytest

from tests.servefix import Screen, alive, chromium, requires_browser, serving
from tests.statefix import canonical, mode

pytestmark = [pytest.mark.browser, requires_browser]

WRITE_KEYS = ("Clear", "Override", "Undo")  # what the console's footer calls its write actions
SCOPES_WRITE_KEYS = ("Clear", "Undo")  # those the scopes view offers (Override acts in the tasks view)


def running(root: Path) -> Path:
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    return root


def becomes_waiting(root: Path) -> None:
    mode(root, "autopilot", active=False, lifecycle_outcome="askuserQuestion", question="which db?")


@pytest.fixture(autouse=True)
def _state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state-home"))


def open_app(context, url: str) -> tuple[object, Screen]:
    page = context.new_page()
    screen = Screen(page)
    page.goto(url)
    page.wait_for_selector("body.-first-byte", timeout=30_000)
    return page, screen


class TestTheOwnerSeesTheFleet:
    def test_rows_then_a_live_change_arrive_in_the_page(self, tmp_path):
        alpha, beta = running(tmp_path / "code" / "alpha"), running(tmp_path / "code" / "beta")
        with serving("--project", str(alpha), "--project", str(beta)) as served, chromium() as context:
            page, screen = open_app(context, served.url)
            screen.wait_for(lambda t: "alpha" in t and "beta" in t and "● run" in t and "READ-ONLY" in t)
            assert "◆ wait" not in screen.text()
            assert len(served.children()) == 1
            since = len(screen.frames)
            becomes_waiting(beta)  # a state file written by the runtime
            screen.wait_for(lambda t: "◆ wait" in t, since=since)
            page.screenshot(path=str(tmp_path / "fleet.png"))
            assert (tmp_path / "fleet.png").stat().st_size > 10_000

    def test_the_console_and_the_hud_are_served_for_one_project(self, tmp_path):
        root = running(tmp_path / "alpha")
        for app, shown in (("--console", "forge"), ("--hud", "forge")):
            with serving(app, "--root", str(root)) as served, chromium() as context:
                _, screen = open_app(context, served.url)
                screen.wait_for(lambda t, shown=shown: shown in t)


class TestStrangersSeeNothing:
    def test_no_token_and_a_wrong_token_get_no_page_and_no_app(self, tmp_path):
        root = running(tmp_path / "code" / "alpha")
        with serving("--project", str(root)) as served, chromium() as context:
            page = context.new_page()
            assert page.goto(served.base + "/").status == 401
            assert page.goto(served.base + "/?token=" + "A" * len(served.token)).status == 403
            assert "terminal" not in page.content()
            page.wait_for_timeout(500)
            assert served.children() == []

    def test_a_page_from_another_origin_cannot_open_a_session_even_with_the_cookie(self, tmp_path):
        root = running(tmp_path / "code" / "alpha")
        with serving("--project", str(root)) as served, chromium() as context, other_site(tmp_path, served) as evil:
            page, _ = open_app(context, served.url)  # the owner's tab: the browser now holds the cookie
            served.wait_children(1)
            page.close()
            served.wait_children(0)
            # another port of the same host is the same *site*, so a SameSite=Strict cookie goes along: the
            # Origin check is what refuses it
            other = context.new_page()
            other.goto(evil)
            other.wait_for_function("document.title !== 'waiting'", timeout=15_000)
            assert other.title() == "refused"
            assert served.children() == []


class other_site:  # noqa: N801 - a context manager read as a noun
    """A page on another port that tries to open the server's WebSocket."""

    def __init__(self, tmp_path: Path, served) -> None:
        self.dir = tmp_path / "evil"
        self.dir.mkdir()
        ws = served.base.replace("http://", "ws://") + "/ws?width=80&height=24"
        (self.dir / "index.html").write_text(
            "<html><head><title>waiting</title></head><body><script>"
            f"const ws = new WebSocket({ws!r});"
            "ws.onopen = () => { document.title = 'open'; };"
            "ws.onerror = () => { document.title = 'refused'; };"
            "</script></body></html>")

    def __enter__(self) -> str:
        directory = str(self.dir)

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=directory, **kwargs)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/index.html"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class TestReadOnly:
    def test_the_console_offers_no_write_action_unless_actions_are_allowed(self, tmp_path):
        root = running(tmp_path / "alpha")
        seen = {}
        for flags in ((), ("--allow-actions",)):
            with serving("--console", "--root", str(root), *flags) as served, chromium() as context:
                _, screen = open_app(context, served.url)
                # the whole first screen: the scopes view with its member, the status bar, the footer
                seen[flags] = screen.wait_for(lambda t: "canonical: forge" in t and "Quit" in t
                                              and "Doctor" in t and ("READ-ONLY" in t or "Clear" in t))
        assert "READ-ONLY" in seen[()]
        assert not any(word in seen[()] for word in WRITE_KEYS)
        assert all(word in seen[("--allow-actions",)] for word in SCOPES_WRITE_KEYS)

    def test_the_fleets_project_view_offers_no_write_action_unless_actions_are_allowed(self, tmp_path):
        root = running(tmp_path / "code" / "alpha")
        seen = {}
        for flags in ((), ("--allow-actions",)):
            with serving("--project", str(root), *flags) as served, chromium() as context:
                page, screen = open_app(context, served.url)
                screen.wait_for(lambda t: "● run" in t)
                since = len(screen.frames)
                page.focus("textarea.xterm-helper-textarea")  # the terminal takes the keys, as after a click
                page.keyboard.press("i")
                seen[flags] = screen.wait_for(lambda t: "active set" in t and "Back" in t and "Console" in t,
                                              since=since)
        written = ("Clear", "Undo", "Override task")
        assert not any(word in seen[()] for word in written)
        assert all(word in seen[("--allow-actions",)] for word in written)
        assert all("Doctor" in seen[flags] for flags in seen)  # findings to read; repairs only with actions


class TestTabsEnd:
    def test_a_closed_tab_leaves_no_process_behind(self, tmp_path):
        root = running(tmp_path / "code" / "alpha")
        with serving("--project", str(root)) as served, chromium() as context:
            page, _ = open_app(context, served.url)
            (pid,) = served.wait_children(1)
            page.close()
            served.wait_children(0)
            assert not alive(pid)
            again, screen = open_app(context, served.url)  # and the next tab gets a new one
            screen.wait_for(lambda t: "alpha" in t)
            assert served.wait_children(1) != [pid]
            started = time.monotonic()
            again.close()
            served.wait_children(0)
            assert time.monotonic() - started < 15
