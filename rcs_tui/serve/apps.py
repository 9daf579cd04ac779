"""What `rcs-tui serve` runs for each browser tab, and which addresses count as this machine only.

Each tab runs the same command the terminal would (`python -m rcs_tui fleet|console|hud …`), with the
same configuration (inherited environment) and the root the server resolved at start, so a tab never
sees another project than the one the owner started the server for. Read-only unless the owner said
`--allow-actions`: the fleet and the console then offer no action that writes; the HUD writes nothing.
"""

from __future__ import annotations

import ipaddress
import sys

APPS = ("fleet", "console", "hud")


def app_argv(app: str, *, readonly: bool, root: str | None = None, projects: tuple[str, ...] = (),
             session: str | None = None, rp1_db: str | None = None) -> list[str]:
    """The argument list of one tab's app process."""
    if app not in APPS:
        raise ValueError(f"unknown app {app!r}")
    argv = [sys.executable, "-m", "rcs_tui", app]
    if app == "fleet":
        for project in projects:
            argv += ["--project", project]
    elif root is not None:
        argv += ["--root", root]
    if app != "hud":
        argv.append("--readonly" if readonly else "--no-readonly")
    if session and app != "fleet":
        argv += ["--session-id" if app == "console" else "--session", session]
    if rp1_db and app == "console":
        argv += ["--db", rp1_db]
    return argv


def loopback(host: str) -> bool:
    """Whether `host` reaches this machine only: `localhost` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """`host` as it goes in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
