"""Acknowledging an entry that needs you: who saw what, kept so the fleet stops alerting about it.

`Acknowledger` is what the fleet's `a` key calls. `HistoryAcknowledger` (the default) records a local
project's acknowledgement in that project's history (the flight recorder's `ack` entry, rcs-tui's own file
under `.rcs/logs/`, so a console or `rcs-tui history` sees the came-back member as acknowledged); a remote
project's, which this host cannot write, goes to `StateDirAcknowledger`: one JSON line in rcs-tui's own
state directory (`$XDG_STATE_HOME/rcs-tui/acks.jsonl`). The alert rules stop alerting about the entry until
its state changes, whatever records it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from rcs_tui.core.times import iso
from rcs_tui.files.cache import state_dir

MAX_ACK_BYTES = 4 * 1024 * 1024  # past this the file starts again (it is a convenience record, not history)


class Acknowledger(Protocol):
    def acknowledge(self, root: str, item_id: str, actor: str) -> None: ...


def item_id(kind: str, item: str) -> str:
    """How an entry is named when acknowledged: `waiting:s1/forge`."""
    return f"{kind}:{item}"


class StateDirAcknowledger:
    """Appends `{"at", "root", "item", "actor"}` lines to `acks.jsonl` in rcs-tui's state directory."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or os.path.join(state_dir(), "acks.jsonl")

    def acknowledge(self, root: str, item_id: str, actor: str) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        line = json.dumps({"at": iso(time.time(), ms=True), "root": root, "item": item_id, "actor": actor},
                          ensure_ascii=False) + "\n"
        try:
            if os.path.getsize(self.path) > MAX_ACK_BYTES:
                os.replace(self.path, self.path + ".1")
        except OSError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


class HistoryAcknowledger:
    """A local project's acknowledgement goes into its history; anything else to `fallback`."""

    def __init__(self, fallback: Acknowledger | None = None) -> None:
        self.fallback = fallback or StateDirAcknowledger()

    def acknowledge(self, root: str, item_id: str, actor: str) -> None:
        from rcs_tui.project.recorder import acknowledge

        if os.path.isabs(root) and os.path.isdir(os.path.join(root, ".rcs")):
            kind, _, member = item_id.partition(":") if ":" in item_id.split("/", 1)[0] else ("", "", item_id)
            acknowledge(Path(root), member, actor, of=kind or None)  # the history names the member, and what
            return
        self.fallback.acknowledge(root, item_id, actor)


def record_all(acknowledger: Acknowledger, root: str, item_ids: Iterable[str], actor: str) -> OSError | None:
    """Record each acknowledgement; one that cannot be written does not stop the others. The last failure
    (None: every one recorded), for the operator to be told that the acknowledgement holds only here."""
    failed: OSError | None = None
    for ident in item_ids:
        try:
            acknowledger.acknowledge(root, ident, actor)
        except OSError as exc:
            failed = exc
    return failed
