"""SSH transport: the system `ssh` client, so the user's ~/.ssh/config (aliases, keys, ProxyJump,
ControlMaster) and known_hosts apply exactly as on the command line. BatchMode keeps it from ever asking
for a password or a host-key confirmation; a connection that goes quiet is dropped by ssh's keepalives.
Also turns ssh's and the remote rcs-tui's failures into one short reason for a row.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import USAGE
from rcs_tui.files.io import loads_strict
from rcs_tui.fleet.projects import Project, ProjectSpecError


@dataclass(frozen=True)
class Ssh:
    """How to run ssh: the binary, an optional `-F` config file and extra `-o` options."""

    binary: str = "ssh"
    config_file: str | None = None
    options: tuple[str, ...] = field(default_factory=tuple)
    connect_timeout: int = 10

    def argv(self, project: Project, remote_args: list[str]) -> list[str]:
        """`ssh … DEST -- COMMAND`: COMMAND is the remote rcs-tui with `remote_args`, quoted for the remote shell.

        A host or user starting with `-` is refused (ProjectSpecError): ssh would read DEST as an option.
        """
        if not project.host:
            raise ProjectSpecError(f"{project.spec!r}: no host to reach over ssh")
        for what, name in (("host", project.host), ("user", project.user)):
            if name and name.startswith("-"):
                raise ProjectSpecError(f"{project.spec!r}: refusing {what} {name!r}: ssh would read a name "
                                       "starting with '-' as an option")
        out = [self.binary, "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={self.connect_timeout}",
               "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]
        if self.config_file:
            out += ["-F", self.config_file]
        for opt in self.options:
            out += ["-o", opt]
        if project.port:
            out += ["-p", str(project.port)]
        return [*out, project.destination(), "--", remote_command(project, remote_args)]


def _quote_path(path: str) -> str:
    """Quote for a POSIX shell, leaving a leading `~/` to the remote shell (the remote home)."""
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def remote_command(project: Project, args: list[str]) -> str:
    parts = [_quote_path(project.command)]
    for arg in args:
        parts.append(_quote_path(arg) if arg == project.path else shlex.quote(arg))
    return " ".join(parts)


def error_line(stderr: str) -> tuple[str, str] | None:
    """The (error, kind) of the last `{"error": ..., "kind": ...}` line rcs-tui wrote on stderr, or None.

    An rcs-tui from before kinds were added writes no kind: ERROR then (its exit status still says usage).
    """
    for line in reversed(stderr.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and '"error"' in line:
            try:
                doc = loads_strict(line)
            except ValueError:
                return None
            message = doc.get("error") if isinstance(doc, dict) else None
            if not isinstance(message, str):
                return None
            kind = doc.get("kind")
            return message, kind if isinstance(kind, str) else kinds.ERROR
    return None


def failure_reason(returncode: int | None, stderr: str, project: Project) -> str:
    """One line saying why a remote command failed, from its exit status and stderr.

    The fleet only ever passes a command line its own rcs-tui accepts, so a usage error (exit status USAGE)
    from the project's rcs-tui means that one does not know the command or an option yet: it is too old.
    """
    text = stderr.strip()
    last = text.splitlines()[-1].strip() if text else ""
    found = error_line(text)  # the remote rcs-tui's own error contract
    if found is not None:
        message, kind = found
        if returncode == USAGE or kind == kinds.USAGE:
            return f"rcs-tui on {project.host} is too old for the fleet ({message})"
        if kind in (kinds.NO_PROJECT, kinds.ERROR):  # the host refused the root we named: say it as a local row
            if message.endswith(": not a directory"):
                return f"no such directory: {project.path}"
            if ": no .rcs/ directory there" in message:
                return f"no .rcs/ in {project.path}"
        return message
    low = text.lower()
    if returncode == 127 or "command not found" in low or "no such file or directory" in low and \
            project.command in text:
        return f"rcs-tui missing on {project.host} (not on its PATH; name it with ?rcs-tui=/path in the URL)"
    if returncode == 255:
        if "permission denied" in low:
            return f"permission denied by {project.host} (ssh: {last})"
        if "host key verification failed" in low or "host key" in low and "changed" in low:
            return f"host key of {project.host} not trusted (ssh: {last})"
        return f"unreachable: {last or 'ssh failed'}"
    if returncode == USAGE:
        return f"rcs-tui on {project.host} is too old for the fleet ({last})"
    return last or f"remote command ended (exit {returncode})"
