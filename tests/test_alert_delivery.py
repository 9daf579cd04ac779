"""Alerts reach real receivers: a webhook through apprise (an HTTP server in the test), a tmux message on a
real tmux server with a client attached, a desktop notifier; a receiver that fails is shown as failed,
retried with a growing delay, and never reported as sent."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rcs_tui.fleet.alerts import AlertSettings, AlertTracker
from rcs_tui.fleet.projects import parse_project
from rcs_tui.fleet.rows import Row

NOW = 1_900_000_000.0


class Receiver:
    """A local webhook: answers each POST with the next status of `statuses` (then 200) and keeps the bodies."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.bodies: list[dict] = []
        self.times: list[float] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.bodies.append(json.loads(body))
                receiver.times.append(time.monotonic())
                code = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made = []

    def make(statuses=()):
        r = Receiver(statuses)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def row_doc(entries, reasons=None):
    return {"version": "1.2", "kind": "snapshot", "team": {}, "attention": entries,
            "needs_you": [{"kind": k, "item": i, "reason": (reasons or {}).get(i, f"{i} needs you"),
                           "source": "reported", "since": None} for k, items in entries.items() for i in items]}


def observe(tracker, entries, reasons=None, name="api"):
    row = Row(parse_project(f"/srv/{name}"))
    row.take(row_doc(entries, reasons), NOW)
    return tracker.observe(row)


async def until(predicate, timeout=10.0):
    import asyncio

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)


async def test_a_webhook_receives_the_alert_with_why_and_how_sure(receiver):
    hook = receiver()
    tracker = AlertTracker(AlertSettings(bell=False, apprise=(hook.url,), min_interval=0))
    observe(tracker, {})
    (alert,) = observe(tracker, {"waiting": ["s1/forge"]},
                       {"s1/forge": "s1/forge waits for your answer (lifecycle outcome askuserQuestion)"})
    assert alert.delivery == "sending"
    await until(lambda: alert.delivery != "sending")
    assert alert.delivery == "sent" and alert.channels == {"apprise": "sent"}
    (body,) = hook.bodies
    assert body["title"] == "rcs-tui: api"
    assert body["message"] == ("api: s1/forge is waiting for you\n"
                               "s1/forge waits for your answer (lifecycle outcome askuserQuestion) [reported]")


async def test_a_failed_delivery_is_shown_retried_with_backoff_and_sent_only_when_it_is(receiver):
    hook = receiver([500, 503])
    tracker = AlertTracker(AlertSettings(bell=False, apprise=(hook.url,), min_interval=0, retries=3, backoff=0.3))
    observe(tracker, {})
    (alert,) = observe(tracker, {"dead": ["crew/w1"]})
    seen = set()

    def watch():
        seen.add(alert.delivery)
        return alert.delivery == "sent"

    await until(watch)
    assert "failed: apprise could not deliver to json://127.0.0.1; retry 1 of 3 in 0.3s" in seen
    assert "failed: apprise could not deliver to json://127.0.0.1; retry 2 of 3 in 0.6s" in seen
    assert len(hook.bodies) == 3
    gaps = [b - a for a, b in zip(hook.times, hook.times[1:], strict=False)]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6  # the delay doubles


async def test_a_receiver_that_never_takes_it_ends_failed_never_sent(receiver):
    hook = receiver([500] * 10)
    tracker = AlertTracker(AlertSettings(bell=False, apprise=(hook.url,), min_interval=0, retries=2, backoff=0.05))
    observe(tracker, {})
    (alert,) = observe(tracker, {"failed": ["s1/forge"]})
    await until(lambda: "after" in alert.delivery)
    assert alert.delivery == "failed: apprise could not deliver to json://127.0.0.1 (after 3 attempts)"
    assert not alert.delivery.startswith("sent") and len(hook.bodies) == 3
    assert tracker.alerts[0].as_json()["channels"] == {"apprise": alert.channels["apprise"]}


async def test_held_back_alerts_are_listed_and_never_sent(receiver):
    hook = receiver()
    tracker = AlertTracker(AlertSettings(bell=False, apprise=(hook.url,), min_interval=0, quiet_hours="00:00-23:59"),
                           minute_of=lambda ts: 600)
    observe(tracker, {})
    (alert,) = observe(tracker, {"waiting": ["s1/forge"]})
    assert alert.delivery == "quiet (quiet hours)" and not alert.sent
    await until(lambda: not tracker._tasks)
    assert hook.bodies == []


async def test_a_project_a_console_shows_is_not_alerted(receiver, tmp_path, monkeypatch):
    from rcs_tui.fleet.focus import looked_at, looking_at

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    hook = receiver()
    tracker = AlertTracker(AlertSettings(bell=False, apprise=(hook.url,), min_interval=0),
                           focused=lambda: {"/srv/api"} & {"/srv/" + os.path.basename(p) for p in looked_at()})
    observe(tracker, {})
    (project := tmp_path / "api").mkdir()
    with looking_at(str(project)):
        (alert,) = observe(tracker, {"waiting": ["s1/forge"]})
    assert alert.delivery == "quiet (looking at it)"
    (later,) = observe(tracker, {"waiting": ["s1/forge", "s2/forge"]})  # the console has closed
    await until(lambda: later.delivery == "sent")
    assert len(hook.bodies) == 1


def test_a_desktop_notification_runs_the_notifier_with_the_text_as_arguments(tmp_path, monkeypatch):
    log = tmp_path / "args"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    notifier = bin_dir / "notify-send"
    notifier.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {log}\n')
    notifier.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    tracker = AlertTracker(AlertSettings(bell=False, desktop=True, min_interval=0))
    observe(tracker, {})
    (alert,) = observe(tracker, {"waiting": ["s1/$(touch pwned)"]})
    assert alert.delivery == "sent"
    assert log.read_text().splitlines() == ["--app-name=rcs-tui", "--", "rcs-tui: api",
                                            "api: s1/$(touch pwned) is waiting for you",
                                            "s1/$(touch pwned) needs you [reported]"]
    assert not (tmp_path / "pwned").exists()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_tmux_message_reaches_an_attached_client_literally(tmp_path):
    """A real tmux server on a private socket with a client attached on a pty: the message shows on the
    client as written, and nothing in it is run."""
    sock = str(tmp_path / "tmux.sock")
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "10"],
                   check=True)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm"
        os.environ.pop("TMUX", None)
        os.execvp("tmux", ["tmux", "-S", sock, "attach", "-t", "t"])
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 10, 250, 0, 0))  # wide enough for the message
        screen = bytearray()

        def read_for(seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    try:
                        screen.extend(os.read(fd, 65536))
                    except OSError:
                        return

        read_for(1.0)
        marker = tmp_path / "pwned"
        tracker = AlertTracker(AlertSettings(bell=False, tmux=True, tmux_socket=sock, min_interval=0))
        observe(tracker, {})
        hostile = f"crew/w#(touch {marker})#{{pane_id}}"
        (alert,) = observe(tracker, {"dead": [hostile]})
        assert alert.delivery == "sent"
        read_for(1.0)
        shown = screen.decode("utf-8", "replace")
        assert f"rcs-tui: api: {hostile} worker died" in shown
        assert not marker.exists()
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
        os.close(fd)
        os.waitpid(pid, 0)
