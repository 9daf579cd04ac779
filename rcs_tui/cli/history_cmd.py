"""`rcs-tui history` (what the flight recorder kept) and `rcs-tui record` (the recorder alone, in the
foreground)."""

from __future__ import annotations

import re
import time
from typing import Any

import click

from rcs_tui.cli.common import CliError, echo_text, emit, json_option, resolve_root, root_option, rp1_paths
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.changes import MAX_TS

HISTORY_DOC_VERSION = "1.0"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(text: str | None, now: float) -> float | None:
    """`--since`: a duration back from now (`90s`, `30m`, `2h`, `1d`, `1h30m`) or an ISO-8601 time."""
    if text is None:
        return None
    from rcs_tui.state.metrics import parse_time

    value = text.strip()
    parts = re.fullmatch(r"(?:\d+(?:\.\d+)?[smhd])+", value)
    if parts:
        at: float | None = now - sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)([smhd])", value))
    else:
        at = parse_time(value)
        if at is None:
            raise CliError(f"--since {text!r}: give a duration such as 90s, 30m, 2h, 1d or an ISO-8601 time",
                           kinds.USAGE)
    if at is None or not 0 <= at <= MAX_TS:  # also a NaN: a history holds times from 1970 to year 9999
        when = "before 1970" if at is not None and at < 0 else "after year 9999"
        raise CliError(f"--since {text!r}: that is {when}; the history holds nothing from then", kinds.USAGE)
    return at


@click.command("history")
@click.option("--since", "since", default=None, metavar="WHEN",
              help="Only entries newer than this: a duration back from now (30m, 2h, 1d) or an ISO-8601 time.")
@click.option("--member", "member", default=None, metavar="M",
              help="Only entries about M: a member key (root/forge), a mode, a scope, a task, run or worker.")
@root_option
@json_option
def history_cmd(since, member, root, as_json):
    """What changed in this project while rcs-tui watched it (the flight recorder's history)."""
    from rcs_tui.core.times import iso
    from rcs_tui.project.recorder import open_comebacks, read_history, recorder_holder
    from rcs_tui.views.history_text import describe, matches, quiet_words, timeline, waiting_since
    from rcs_tui.views.line_fit import ago

    root_path = resolve_root(root)
    now = time.time()
    since_ts = parse_since(since, now)
    warnings: list[str] = []
    everything = read_history(root_path, warnings)
    entries = [e for e in everything if matches(e, member)
               and (since_ts is None or (isinstance(e.get("ts"), (int, float)) and e["ts"] >= since_ts))]
    comebacks = [e for e in open_comebacks(everything) if matches(e, member)]
    waits = {k: t for k, t in waiting_since(everything).items() if matches({"subject": k}, member)}
    holder = recorder_holder(root_path)
    doc: dict[str, Any] = {
        "version": HISTORY_DOC_VERSION, "kind": "history", "root": str(root_path),
        "since": None if since_ts is None else iso(since_ts), "member": member,
        "entries": entries, "open_comebacks": comebacks,
        "waiting": {k: iso(t) for k, t in sorted(waits.items())},
        "recorder": holder, "warnings": warnings,
    }

    def human(d: dict[str, Any]) -> str:
        lines = []
        for kind, item in timeline(d["entries"]):
            if kind == "quiet":
                lines.append(f"{'':19}  {quiet_words(item)}")
                continue
            ts = item.get("ts")
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if isinstance(ts, (int, float)) else "?"
            age = f"{ago(now - ts)} ago" if isinstance(ts, (int, float)) else ""
            lines.append(f"{when}  {age:>9}  {describe(item)}")
        if not lines:
            lines.append("no history entries" + (" match" if member or since else " yet"))
        for e in d["open_comebacks"]:
            lines.append(f"not acknowledged: {describe(e)} (entry {e.get('id')})")
        if waits:
            lines.append("waiting for you: " + ", ".join(f"{k} for {ago(now - t)}"
                                                         for k, t in sorted(waits.items(), key=lambda kv: kv[1])))
        who = d["recorder"]
        lines.append(f"recording now: pid {who.get('pid')} ({who.get('actor') or 'rcs-tui'})" if who
                     else "no rcs-tui is recording this project now (run `rcs-tui record`, or any HUD/console)")
        lines += [f"warning: {w}" for w in d["warnings"]]
        return "\n".join(lines)

    emit(doc, as_json, human)


@click.command("record")
@click.option("--session-id", "session_id", default=None, help="The session the snapshot resolves (else current).")
@click.option("--poll", is_flag=True, help="Poll instead of native file events.")
@click.option("--db", "db", default=None, help="rp1 database (else $RP1_DB, else ~/.rp1/rp1.db).")
@root_option
def record_cmd(session_id, poll, db, root):
    """Run the flight recorder in the foreground until interrupted (standby while another rcs-tui records)."""
    import asyncio
    from pathlib import Path

    from rcs_tui.project.recorder import HISTORY_REL, recorder_holder, run_recorder
    from rcs_tui.state.txn import default_actor

    root_path = resolve_root(root)
    db_path, _roots = rp1_paths(db)

    def status(what: str) -> None:
        if what == "standby":
            who = recorder_holder(root_path) or {}
            echo_text(f"standby: another rcs-tui records {root_path} (pid {who.get('pid', '?')}); "
                      "taking over when it stops")
        else:
            echo_text(f"recording {root_path} into {HISTORY_REL}")

    try:
        asyncio.run(run_recorder(root_path, session_id=session_id, rp1_db=Path(db_path) if db_path else None,
                                 poll=poll, actor=default_actor("record"), on_status=status))
    except KeyboardInterrupt:
        return
