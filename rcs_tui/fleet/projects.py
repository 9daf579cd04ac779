"""Fleet project specs: local paths, globs (kept only where `.rcs/` exists) and `ssh://` URLs.

`ssh://HOST/PATH` and `ssh://USER@HOST:PORT/PATH` name a project on a host the system `ssh` reaches,
with the user's `~/.ssh/config` (aliases, keys, ProxyJump, ControlMaster) applied by ssh itself. A path
starting `/~/` is relative to the remote home. `?rcs-tui=/full/path/rcs-tui` names the remote command when
it is not on the remote PATH.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

GLOB_CHARS = re.compile(r"[*?\[]")
HOST_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")
USER_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")


class ProjectSpecError(ValueError):
    """A project entry that cannot be used (the message names it and says why)."""


@dataclass(frozen=True)
class Project:
    """One fleet row's source: a local root, or a host plus a path there."""

    spec: str
    path: str
    host: str | None = None
    user: str | None = None
    port: int | None = None
    command: str = "rcs-tui"
    label: str | None = field(default=None, compare=False)  # the shown name when the last part is not unique

    @property
    def remote(self) -> bool:
        return self.host is not None

    @property
    def key(self) -> str:
        if not self.remote:
            return self.path
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        command = "" if self.command == "rcs-tui" else "?rcs-tui=" + quote(self.command, safe="/~")
        # written so that `parse_project` reads it back as this project: a home-relative path after a slash,
        # the characters a URL gives a meaning to (`#`, `?`, `%`, spaces) escaped
        path = quote(self.path if self.path.startswith("/") else "/" + self.path, safe="/~")
        return f"ssh://{user}{self.host}{port}{path}{command}"

    @property
    def name(self) -> str:
        return self.label or Path(self.path.rstrip("/")).name or self.path

    @property
    def host_label(self) -> str:
        return self.host if self.host else "local"

    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else str(self.host)


def parse_project(spec: str) -> Project:
    """One entry as written (no glob expansion); ProjectSpecError when it is malformed."""
    text = spec.strip()
    if not text:
        raise ProjectSpecError("empty project entry")
    if "://" not in text:
        return Project(spec, str(Path(os.path.expanduser(text)).absolute()))
    parts = urlsplit(text)
    if "#" in text:  # a URL ends its path at `#`: the rest would be dropped silently, and another path read
        raise ProjectSpecError(f"{spec!r}: a '#' ends the path in an ssh:// URL; write it as %23")
    if parts.scheme != "ssh":
        raise ProjectSpecError(f"{spec!r}: only local paths and ssh://HOST/PATH URLs are supported")
    host = parts.netloc.rpartition("@")[2]
    host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host  # ssh config aliases keep their case
    if not host or not HOST_RE.fullmatch(host):
        raise ProjectSpecError(f"{spec!r}: no usable host name (ssh://HOST/PATH or ssh://USER@HOST:PORT/PATH)")
    if host.startswith("-"):
        raise ProjectSpecError(f"{spec!r}: a host name may not start with '-' (ssh would read it as an option)")
    try:
        port = parts.port
    except ValueError as exc:
        raise ProjectSpecError(f"{spec!r}: bad port ({exc})") from None
    user = unquote(parts.username) if parts.username else None
    if user is not None and not USER_RE.fullmatch(user):
        raise ProjectSpecError(f"{spec!r}: bad user name {user!r}")
    if user is not None and user.startswith("-"):
        raise ProjectSpecError(f"{spec!r}: a user name may not start with '-' (ssh would read it as an option)")
    path = unquote(parts.path)
    if path.startswith("/~/") or path == "/~":
        path = path[1:]
    if not path or path == "/":
        raise ProjectSpecError(f"{spec!r}: no project path after the host")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"rcs-tui"})
    if unknown or (parts.query and not query):
        raise ProjectSpecError(f"{spec!r}: unknown option {', '.join(unknown) or parts.query!r} after '?' "
                               "(only rcs-tui=COMMAND; write a '?' in the path as %3F)")
    command = query.get("rcs-tui", ["rcs-tui"])[-1]
    if not command.strip() or any(c in command for c in "\n\r\0"):
        raise ProjectSpecError(f"{spec!r}: bad rcs-tui command")
    return Project(spec, path, host, user, port, command)


def expand_projects(specs: list[str]) -> tuple[list[Project], list[str]]:
    """Every project the specs name, in order, without duplicates, and the problems found.

    A local glob keeps only directories holding `.rcs/`; a plain path is kept even without one (its row
    says so). A malformed entry is reported, not fatal.
    """
    out: dict[str, Project] = {}
    problems: list[str] = []
    for spec in specs:
        try:
            project = parse_project(spec)
        except ProjectSpecError as exc:
            problems.append(str(exc))
            continue
        if not project.remote and GLOB_CHARS.search(spec):
            for match in sorted(glob.glob(os.path.expanduser(spec.strip()))):
                if os.path.isdir(os.path.join(match, ".rcs")):
                    p = Project(spec, str(Path(match).absolute()))
                    out.setdefault(p.key, p)
            continue
        out.setdefault(project.key, project)
    return distinct_names(list(out.values())), problems


def distinct_names(projects: list[Project]) -> list[Project]:
    """The projects, where two different paths would show the same name, labelled by as many trailing
    path parts as tell them apart (`work/api` and `old/api` rather than `api` twice). The same path on two
    hosts keeps its name: the host column tells those apart."""
    parts = {p.key: [x for x in Path(p.path.rstrip("/")).parts if x != "/"] for p in projects}
    out = []
    for p in projects:
        mine = parts[p.key]
        others = [parts[q.key] for q in projects if q.path != p.path and parts[q.key][-1:] == mine[-1:]]
        k = 1
        while k < len(mine) and any(o[-k:] == mine[-k:] for o in others):
            k += 1
        out.append(p if k == 1 else replace(p, label="/".join(mine[-k:])))
    return out
