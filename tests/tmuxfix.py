"""A tmux server of a test's own (a private socket, no user config) and a way to wait for what a pane shows."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class Tmux:
    """A private tmux server: `run` a tmux command against it; `env` is what $TMUX is inside it."""

    def __init__(self, sock: Path, env: str, client_env: dict[str, str]) -> None:
        self.sock = sock
        self.env = env
        self.client_env = client_env

    def run(self, *args: str, check: bool = True) -> str:
        """A tmux command, from a client with the server's environment (tmux gives a pane it starts the PATH
        of the client that asked)."""
        return subprocess.run(["tmux", "-S", str(self.sock), *args], capture_output=True, text=True,
                              check=check, env=self.client_env).stdout

    def pane_text(self, target: str) -> str:
        return self.run("capture-pane", "-p", "-t", target, check=False)

    def wait(self, what: Callable[[], str], want: Callable[[str], bool], timeout: float = 30.0) -> str:
        """Poll `what()` until `want` holds of it (a busy machine may take long); the last value either way."""
        deadline = time.monotonic() + timeout
        seen = what()
        while not want(seen) and time.monotonic() < deadline:
            time.sleep(0.2)
            seen = what()
        return seen


@contextmanager
def tmux_server(tmp_path: Path, env: dict[str, str] | None = None, width: int = 160) -> Iterator[Tmux]:
    """Start a tmux server (no ~/.tmux.conf) with `env` as its whole environment's overrides; kill it after."""
    sock = tmp_path / "tmux.sock"
    full = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    subprocess.run(["tmux", "-S", str(sock), "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(width),
                    "-y", "30"], check=True, env=full)
    pid = subprocess.run(["tmux", "-S", str(sock), "display-message", "-p", "#{pid}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        yield Tmux(sock, f"{sock},{pid},0", full)
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)


@contextmanager
def attached(target: Tmux, tmp_path: Path, width: int = 160) -> Iterator[Callable[[], str]]:
    """A real client attached to `target`, drawn inside a second private server; yields a function returning
    the client's screen as text, its last line being `target`'s status line as tmux draws it."""
    outer_dir = tmp_path / "outer"
    outer_dir.mkdir()
    with tmux_server(outer_dir, env={"TMUX": None}, width=width) as outer:  # type: ignore[dict-item]
        outer.run("respawn-pane", "-k", "-t", "t", f"env -u TMUX tmux -S {target.sock} attach -t t")
        yield lambda: outer.pane_text("t")
