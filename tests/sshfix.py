"""A real OpenSSH server on 127.0.0.1 for fleet tests: throwaway host and user keys, a free port.

`SshServer` writes an sshd_config and a client ssh_config (alias `rcs-test-host`, the throwaway key,
a known_hosts holding the host key, strict checking) under a temporary directory and runs
`/usr/sbin/sshd -D` on a free port. Logins get this interpreter's bin directory first on PATH (an
authorized_keys `environment=` option), so the remote `rcs-tui` is the one under test. `stop()` ends the
server and every connection it serves (they are its descendants); `start()` brings it back on the same port.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


class SshServer:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o700)
        self.port = _free_port()
        self.user = getpass.getuser()
        self.proc: subprocess.Popen[bytes] | None = None
        self.host_key = self.base / "host_ed25519"
        self.user_key = self.base / "user_ed25519"
        for key in (self.host_key, self.user_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        bindir = str(Path(sys.executable).parent)
        env = f'environment="PATH={bindir}:/usr/local/bin:/usr/bin:/bin"'
        (self.base / "authorized_keys").write_text(f"{env} {self.user_key.with_suffix('.pub').read_text()}")
        os.chmod(self.base / "authorized_keys", 0o600)
        self.sshd_config = self.base / "sshd_config"
        self.sshd_config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.host_key}",
            f"PidFile {self.base / 'sshd.pid'}", f"AuthorizedKeysFile {self.base / 'authorized_keys'}",
            "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin yes", "StrictModes no", "UsePAM no", "PermitUserEnvironment yes",
            "PrintMotd no", "LogLevel ERROR", ""]))
        host_pub = self.host_key.with_suffix(".pub").read_text().split()
        (self.base / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        self.ssh_config = self.base / "ssh_config"
        self.ssh_config.write_text("\n".join([
            f"Host {ALIAS}", "  HostName 127.0.0.1", f"  Port {self.port}", f"  User {self.user}",
            f"  IdentityFile {self.user_key}", "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.base / 'known_hosts'}", "  StrictHostKeyChecking yes",
            "  ControlMaster no", "  LogLevel ERROR", ""]))

    def url(self, path: Path | str) -> str:
        return f"ssh://{ALIAS}{path}"

    def start(self, timeout: float = 10.0) -> None:
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.sshd_config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
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
