"""A real OpenSSH server on 127.0.0.1 for fleet tests: throwaway host and user keys, a free port.

`SshServer` writes an sshd_config and a client ssh_config (alias `rcs-test-host`, the throwaway key,
a known_hosts holding the host key, strict checking) under a temporary directory and runs
`/usr/sbin/sshd -D` on a free port (a band of ports per pytest-xdist worker). Logins get this interpreter's
bin directory first on PATH and the tested code's directory on PYTHONPATH (authorized_keys `environment=`
options), so the remote `rcs-tui` is the one under test. `stop()` ends the server and every connection it
serves (they are its descendants); `start()` brings it back on the same port.
"""

from __future__ import annotations

import getpass
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import rcs_tui

SSHD = "/usr/sbin/sshd"
ALIAS = "rcs-test-host"


def available() -> str | None:
    """None when a test server can run here, else why not."""
    if not Path(SSHD).exists():
        return "openssh-server is not installed (scripts/test.sh installs it)"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def _free_port() -> int:
    """A port free right now, below the kernel's ephemeral range and in a band of this pytest-xdist worker's own.

    Port 0 would hand out an ephemeral port, which any outgoing connection (another worker's ssh client,
    say) may take between this check and sshd's bind, or while `stop()`/`start()` restarts the server.
    Ports below the range are never given out that way, and each worker picks in a band of its own.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    low = 20_000 + (index % 12) * 1_000
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(low, low + 1_000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {low}..{low + 999}")


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


class _PortTaken(RuntimeError):
    pass


class SshServer:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o700)
        self.user = getpass.getuser()
        self.proc: subprocess.Popen[bytes] | None = None
        self._started = False  # once it has listened, the port is the server's for good
        self.host_key = self.base / "host_ed25519"
        self.user_key = self.base / "user_ed25519"
        for key in (self.host_key, self.user_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        bindir = str(Path(sys.executable).parent)
        # the code under test first on the login's import path too, as conftest's `_clean_env` does for local
        # commands: the venv's `rcs-tui` may be installed from another checkout (or mutmut's copy is tested)
        code_root = str(Path(rcs_tui.__file__).resolve().parent.parent)
        # A login's shell startup may refresh pyenv's shims under a lock; a login killed meanwhile (a host
        # going away, as `stop()` does) leaves the lock behind, and every later login waited 60 s on it.
        env = (f'environment="PATH={bindir}:/usr/local/bin:/usr/bin:/bin",environment="PYTHONPATH={code_root}",'
               'environment="PYENV_REHASH_TIMEOUT=0"')
        (self.base / "authorized_keys").write_text(f"{env} {self.user_key.with_suffix('.pub').read_text()}")
        os.chmod(self.base / "authorized_keys", 0o600)
        self.sshd_config = self.base / "sshd_config"
        self.ssh_config = self.base / "ssh_config"
        self._configure(_free_port())

    def _configure(self, port: int) -> None:
        """Write the server's and the client's config (and known_hosts) for `port`."""
        self.port = port
        self.sshd_config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.host_key}",
            f"PidFile {self.base / 'sshd.pid'}", f"AuthorizedKeysFile {self.base / 'authorized_keys'}",
            "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin yes", "StrictModes no", "UsePAM no", "PermitUserEnvironment yes",
            "PrintMotd no", "LogLevel ERROR", ""]))
        host_pub = self.host_key.with_suffix(".pub").read_text().split()
        (self.base / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        self.ssh_config.write_text("\n".join([
            f"Host {ALIAS}", "  HostName 127.0.0.1", f"  Port {self.port}", f"  User {self.user}",
            f"  IdentityFile {self.user_key}", "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.base / 'known_hosts'}", "  StrictHostKeyChecking yes",
            "  ControlMaster no", "  LogLevel ERROR", ""]))

    def url(self, path: Path | str) -> str:
        return f"ssh://{ALIAS}{path}"

    def start(self, timeout: float = 10.0) -> None:
        """Run sshd until it listens. On a first start whose port was taken meanwhile (another test run),
        move to another port; a restart keeps its port, as a host coming back would."""
        for attempt in range(5):
            try:
                return self._start(timeout)
            except _PortTaken:
                if self._started or attempt == 4:
                    raise
                self._configure(_free_port())

    def _start(self, timeout: float) -> None:
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.sshd_config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                self.proc = None
                raise (_PortTaken if "Address already in use" in err else RuntimeError)(f"sshd exited: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    self._started = True
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("sshd did not start listening")

    def stop(self) -> None:
        """End the server and every session it serves (as a host going away would)."""
        if self.proc is None:
            return
        pids = _descendants(self.proc.pid)
        for pid in [self.proc.pid, *pids]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(5)
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def ssh(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a command on the server through the client config (BatchMode: never prompts)."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", ALIAS, "--", *args],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
