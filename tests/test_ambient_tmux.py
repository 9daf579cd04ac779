"""Ambient status: the README's tmux lines, sourced into a real tmux server with a client attached on a
terminal, draw what needs you from `rcs-tui hud --tmux-options` in the status line; it changes when a
member starts waiting, names from disk are shown and never run, and an unchanged project costs no tmux
process."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from statefix import mode

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\([A-Z0-9]|\x1b[=>]")
README = Path(__file__).resolve().parent.parent / "README.md"


def readme_tmux_lines() -> list[str]:
    text = README.read_text()
    block = text.split("<!-- ambient-tmux -->", 1)[1]
    body = re.search(r"```tmux\n(.*?)```", block, re.S)
    assert body is not None
    return [line for line in body.group(1).splitlines() if line.strip()]


class Client:
    """A tmux client attached on a pty of 200 columns; `screen()` is everything it has drawn so far."""

    def __init__(self, sock: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ["TERM"] = "xterm"
            os.environ.pop("TMUX", None)
            os.execvp("tmux", ["tmux", "-S", sock, "attach", "-t", "t"])
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 8, 200, 0, 0))
        self.out = bytearray()

    def read_until(self, needle: str, timeout: float = 15.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if needle in self.text():
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.out.extend(os.read(self.fd, 65536))
                except OSError:
                    return False
        return needle in self.text()

    def text(self) -> str:
        """What it drew, without its terminal's control sequences (colours, cursor moves)."""
        return ANSI.sub("", self.out.decode("utf-8", "replace"))

    def close(self) -> None:
        os.close(self.fd)
        os.waitpid(self.pid, 0)


@pytest.fixture
def tmux(tmp_path):
    sock = str(tmp_path / "tmux.sock")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TMUX", None)
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "8"],
                   check=True, env=env)
    try:
        yield sock, env
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)


def option(sock: str, name: str) -> str:
    return subprocess.run(["tmux", "-S", sock, "show-options", "-gqv", name], capture_output=True,
                          text=True).stdout.rstrip("\n")


def until(predicate, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_the_readme_lines_show_what_needs_you_in_the_status_line(tmux, tmp_path):
    sock, env = tmux
    root = tmp_path / "api"
    (root / ".rcs" / "state").mkdir(parents=True)
    mode(root, "forge", None, active=True, current_phase="executing")
    conf = tmp_path / "tmux.conf"
    conf.write_text("\n".join(line.replace("~/work/api", str(root)) for line in readme_tmux_lines()) + "\n")
    subprocess.run(["tmux", "-S", sock, "source-file", str(conf)], check=True, env=env)
    client = Client(sock)
    try:
        assert until(lambda: option(sock, "@rcs_waiting") == "0"), conf.read_text()
        assert option(sock, "@rcs_attention") == ""
        assert client.read_until("forge"), client.text()[-2000:]
        mode(root, "autopilot", None, active=False, lifecycle_outcome="askuserQuestion")
        assert until(lambda: option(sock, "@rcs_waiting") == "1")
        assert option(sock, "@rcs_attention") == "1 waiting"
        assert client.read_until("1 waiting | [RCS] ● forge | autopilot→askuserQuestion"), client.text()[-2000:]
    finally:
        client.close()


def test_values_are_format_escaped_and_set_only_when_they_change(tmux, tmp_path):
    import asyncio

    from rcs_tui.fleet.ambient import TmuxOptions

    sock, _env = tmux
    marker = tmp_path / "pwned"
    options = TmuxOptions(sock)
    hostile = {"@rcs_line": f"w#(touch {marker}) #{{pane_id}} -x;", "@rcs_attention": "", "@rcs_waiting": "0"}
    assert asyncio.run(options.update(hostile)) is None
    assert options.sets == 3
    assert asyncio.run(options.update(hostile)) is None
    assert options.sets == 3  # nothing changed: no tmux process
    subprocess.run(["tmux", "-S", sock, "set", "-g", "status-right", "#{@rcs_line}"], check=True)
    subprocess.run(["tmux", "-S", sock, "set", "-g", "status-right-length", "150"], check=True)
    client = Client(sock)
    try:
        assert client.read_until(f"w#(touch {marker}) #{{pane_id}} -x;"), client.text()[-2000:]
        time.sleep(0.3)
        assert not marker.exists()
    finally:
        client.close()


def test_outside_tmux_it_says_how_to_run_it(run_cli, tmp_path):
    (tmp_path / ".rcs").mkdir()
    res = run_cli("hud", "--tmux-options", "--root", str(tmp_path), env={"TMUX": ""})
    assert res.code == 1
    assert "TMUX is not set" in res.error
