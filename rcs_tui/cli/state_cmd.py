"""`rcs-tui state …`, `undo`, `journal`, `snapshot`: the CLI parity surface over the transition core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from rcs_tui.cli.common import (
    CliError,
    Finite,
    emit,
    expect_plan_option,
    json_option,
    readable_snapshot,
    resolve_root,
    root_option,
    rp1_paths,
)
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.words import plural
from rcs_tui.files.io import MAX_STATE_BYTES, dump_json, loads_strict
from rcs_tui.views.text import strip_controls


def _load_input(raw: str | None, file: str | None) -> dict[str, Any]:
    if raw is not None and file is not None:
        raise click.UsageError("use either --input or --input-file, not both")
    if file is not None:
        raw = _read_input_file(file)
        where = f"--input-file {file}"
    else:
        where = "--input"
    if raw is None or not raw.strip():
        return {}
    try:
        data = loads_strict(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                       kinds.BAD_INPUT) from exc
    except (ValueError, RecursionError) as exc:  # NaN/Infinity (never written to a runtime file), too deep
        raise CliError(f"{where}: invalid JSON: {str(exc)[:120] or 'nested too deeply'}", kinds.BAD_INPUT) from exc
    if not isinstance(data, dict):
        raise CliError(f"{where}: expected a JSON object, got {type(data).__name__}", kinds.BAD_INPUT)
    try:
        dump_json(data)  # refuse now what could never be written: text that is not valid Unicode
    except ValueError as exc:
        raise CliError(f"{where}: {exc}", kinds.BAD_INPUT) from None
    return data


INPUT_WAIT_S = 60.0  # the longest a pipe or FIFO given as --input-file is waited on


def _read_input_file(file: str) -> str:
    """The operator's input file, read to at most MAX_STATE_BYTES (a pipe such as /dev/stdin is fine;
    /dev/zero or a huge file is an error, not an endless read, and a FIFO nobody writes to is an error after
    INPUT_WAIT_S, not a hang)."""
    try:
        raw = _read_bounded_input(file)
    except OSError as exc:
        raise CliError(f"--input-file {file}: cannot read: {exc.strerror or exc}", kinds.IO_ERROR) from None
    if raw is None:
        raise CliError(f"--input-file {file}: nothing was written to it within {INPUT_WAIT_S:.0f} s (a FIFO or"
                       " pipe with no writer?); not read", kinds.BAD_INPUT)
    if len(raw) > MAX_STATE_BYTES:
        raise CliError(f"--input-file {file}: larger than {MAX_STATE_BYTES} bytes; not read", kinds.BAD_INPUT)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"--input-file {file}: not UTF-8 (byte {exc.start})", kinds.BAD_INPUT) from None


def _read_bounded_input(file: str) -> bytes | None:
    """Up to MAX_STATE_BYTES + 1 bytes of `file`, opened without blocking (a FIFO's open waits for a writer
    otherwise); from a pipe, device or FIFO each read waits until the deadline at most. None: the deadline
    passed first."""
    import os
    import select
    import stat
    import time

    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    try:
        waits = not stat.S_ISREG(os.fstat(fd).st_mode)
        deadline = time.monotonic() + INPUT_WAIT_S
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_STATE_BYTES:
            if waits:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    return None
            try:
                chunk = os.read(fd, min(1 << 20, MAX_STATE_BYTES + 1 - size))
            except BlockingIOError:
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _opts(func):
    for deco in reversed([
        click.option("--input", "input_json", default=None,
                     help='JSON object input, e.g. {"mode": "team", "session_id": "…"}.'),
        click.option("--input-file", "input_file", default=None, help="Read the JSON input from a file."),
        click.option("--mode", "mode", default=None, help="Mode name (else input.mode)."),
        click.option("--session-id", "session_id", default=None, help="Session scope (else resolved)."),
        root_option, json_option,
    ]):
        func = deco(func)
    return func


def _common(root, input_json, input_file, mode, session_id):
    data = _load_input(input_json, input_file)
    mode = mode or data.get("mode")
    sid = session_id if session_id is not None else data.get("session_id")
    if sid is not None and not isinstance(sid, str):
        raise CliError(f"input.session_id: expected a string, got {type(sid).__name__}", kinds.BAD_INPUT)
    if mode is not None and not isinstance(mode, str):
        raise CliError(f"input.mode: expected a string, got {type(mode).__name__}", kinds.BAD_INPUT)
    return resolve_root(root), data, mode, sid


def _need_mode(mode: Any) -> str:
    if mode is None:
        raise click.UsageError("a mode is required: --mode M or --input '{\"mode\": \"M\"}'")
    if not isinstance(mode, str):
        raise CliError(f"input.mode: expected a string, got {type(mode).__name__}", kinds.BAD_INPUT)
    return mode


@click.group()
def state() -> None:
    """Read and change `.rcs/state` through the transition core (like `rcs state`)."""


@state.command("read")
@_opts
def read_cmd(root, as_json, input_json, input_file, mode, session_id):
    """Print a mode file (or {"exists": false})."""
    from rcs_tui.state.ops import read_mode

    root, _, mode, sid = _common(root, input_json, input_file, mode, session_id)
    emit(read_mode(root, _need_mode(mode), sid), True)


@state.command("write")
@_opts
@click.option("--dry-run", is_flag=True, help="Print the exact plan and touch nothing.")
def write_cmd(root, as_json, input_json, input_file, mode, session_id, dry_run):
    """Shallow-merge fields into a mode file; activation goes through the transition policy."""
    from rcs_tui.state.inputs import validate_write
    from rcs_tui.state.ops import plan_write

    root, data, mode, sid = _common(root, input_json, input_file, mode, session_id)
    validate_write(data, "--input" if input_file is None else "--input-file")
    op = plan_write(root, _need_mode(mode), data, sid)
    emit(op.preview(root) if dry_run else op.run(root), True)


@state.command("clear")
@_opts
@click.option("--all-sessions", is_flag=True, help="Clear the mode in root and every session.")
@click.option("--in-root", is_flag=True, help="Clear the root copy even when a session is current.")
@click.option("--dry-run", is_flag=True, help="Print the exact plan and touch nothing.")
@click.option("--retry", type=click.IntRange(0, 100), default=0, show_default=True,
              help="When a file changes underneath (a runtime still writing), re-plan on fresh data and try "
                   "again up to N times; only an applied attempt is journaled.")
@expect_plan_option
def clear_cmd(root, as_json, input_json, input_file, mode, session_id, all_sessions, in_root, dry_run, retry,
              expect_plan):
    """Clear one member of the active set.

    In a session whose mode also has a root copy, the session's file becomes a tombstone: an inactive
    marker that keeps the root copy from bringing the mode back in that session.
    """
    from rcs_tui.state.inputs import validate_clear
    from rcs_tui.state.ops import ROOT_SCOPE, plan_clear
    from rcs_tui.state.txn import ChangedUnderneath

    if in_root and (session_id or all_sessions):
        raise click.UsageError("--in-root goes without --session-id and --all-sessions")
    root, data, mode, sid = _common(root, input_json, input_file, mode, session_id)
    sid = ROOT_SCOPE if in_root else sid
    parsed = validate_clear(data, "--input" if input_file is None else "--input-file")
    mode = _need_mode(mode)
    for attempt in range(retry + 1):
        op = plan_clear(root, mode, sid, all_sessions or parsed.all_sessions)
        if dry_run:
            emit(op.preview(root), True)
            return
        try:
            result = op.run(root, expect_plan=expect_plan)
        except ChangedUnderneath as exc:
            if attempt == retry:
                raise ChangedUnderneath(f"{exc} (after {plural(attempt + 1, 'attempt')}; a runtime is still writing: "
                                        "pause it, or use --all-sessions, or run `rcs-tui doctor`)"
                                        if retry else str(exc)) from None
            continue
        emit({**result, "attempts": attempt + 1} if retry else result, True)
        return


@state.command("list-active")
@_opts
def list_active_cmd(root, as_json, input_json, input_file, mode, session_id):
    """Active modes of the authoritative scope."""
    from rcs_tui.files.layout import Layout
    from rcs_tui.state.ops import list_active, require_session

    root, _, _, sid = _common(root, input_json, input_file, mode, session_id)
    if sid is not None:
        require_session(Layout(root), sid)  # a typo'd session is an error, not an empty answer
    emit(list_active(readable_snapshot(root, sid)), True)


@state.command("get-status")
@_opts
def get_status_cmd(root, as_json, input_json, input_file, mode, session_id):
    """Status of every mode file (or one) in the authoritative scope."""
    from rcs_tui.state.ops import check_mode, get_status

    root, _, mode, sid = _common(root, input_json, input_file, mode, session_id)
    emit(get_status(readable_snapshot(root, sid), check_mode(mode) if mode else None), True)


@state.command("what-if")
@click.argument("request")
@click.option("--session-id", "session_id", default=None)
@root_option
@json_option
def what_if_cmd(request, session_id, root, as_json):
    """Show the core's decision for REQUEST (a mode or a `$a $b …` prompt) without writing anything."""
    from rcs_tui.core.policy import decide_prompt
    from rcs_tui.state.reader import read_snapshot

    snap = read_snapshot(resolve_root(root), session_id, all_sessions=False)
    scope = snap.authoritative
    result = decide_prompt(request, snap.active_set(), {m: f.data for m, f in scope.modes.items()})
    if not result.requested:
        raise CliError(f"no tracked mode in request {request!r}", kinds.BAD_INPUT)
    data = result.as_json()
    for shown, decision in zip(data["decisions"], result.decisions, strict=True):
        shown["operator_message"] = decision.operator_message  # the rcs-tui command, where `message` has rcs's
    emit(data, as_json, _human_whatif)


def _human_whatif(data: dict[str, Any]) -> str:
    lines = [f"requested: {', '.join(data['requested'])}"]
    lines += data["notes"]
    for d in data["decisions"]:
        lines.append(f"{d['request']}: {d['decision']} — {d['operator_message']}")
    lines.append(f"final active set: {', '.join(data['final_active']) or '(empty)'}")
    return "\n".join(lines)


@click.command("snapshot")
@click.option("--session-id", "session_id", default=None)
@click.option("--follow", is_flag=True, help="Keep printing: one JSON document per line, a new one on every change, "
              "until stdin closes.")
@click.option("--heartbeat", type=Finite(0, 3600), default=0.0,
              help="With --follow: a heartbeat line after this many quiet seconds (0: none).")
@click.option("--poll", is_flag=True, help="With --follow: poll instead of native file events.")
@root_option
@json_option
def snapshot_cmd(session_id, follow, heartbeat, poll, root, as_json):
    """The whole project as the TUI shows it (state, team, tasks, rp1, doctor), as versioned JSON."""
    from rcs_tui.project.feed import SnapshotFeed

    db = rp1_paths()[0]
    feed = SnapshotFeed(resolve_root(root), session_id=session_id, rp1_db=Path(db) if db else None)
    if follow:
        from rcs_tui.cli.follow import follow as run_follow

        run_follow(feed, heartbeat=heartbeat, poll=poll)
        return
    from rcs_tui.files.collector import one_shot

    one_shot()
    emit(feed.document(), True)


@click.command("undo")
@click.argument("entry", required=False)
@click.option("--dry-run", is_flag=True, help="Print what would be restored and touch nothing.")
@expect_plan_option
@root_option
@json_option
def undo_cmd(entry, dry_run, expect_plan, root, as_json):
    """Undo the last (or the given) journal entry, restoring each file's before-image byte for byte."""
    from rcs_tui.state.journal import undo

    emit(undo(resolve_root(root), entry, dry_run=dry_run, expect_plan=expect_plan), True)


@click.command("redo")
@click.argument("entry", required=False)
@click.option("--dry-run", is_flag=True, help="Print what would be re-applied and touch nothing.")
@expect_plan_option
@root_option
@json_option
def redo_cmd(entry, dry_run, expect_plan, root, as_json):
    """Re-apply the most recently undone (or the given) journal entry, through the same checked write path."""
    from rcs_tui.state.redo import redo_operation

    path = resolve_root(root)
    op = redo_operation(path, entry)
    emit(op.preview(path) if dry_run else op.run(path, expect_plan=expect_plan), True)


@click.command("journal")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="Show at most this many entries, newest first.")
@root_option
@json_option
def journal_cmd(limit, root, as_json):
    """Operator actions recorded in `.rcs/logs/rcs-tui-journal.jsonl`, newest first."""
    import time

    from rcs_tui.state.journal import load
    from rcs_tui.state.metrics import parse_time
    from rcs_tui.views.text import ago

    entries, warnings = load(resolve_root(root), limit=max(limit, 0))
    now = time.time()

    def when(at: Any) -> str:
        t = parse_time(at)
        return f"{ago(now - t)} ago" if t is not None else "?"

    rows = [{"id": e["id"], "at": e.get("at"), "actor": e.get("actor"), "action": e.get("action"),
             "files": [f.get("path") for f in e["files"]], "undone": e["undone"],
             "complete": e["complete"],
             **({"undoes": e["undoes"]} if "undoes" in e else {})}
            for e in reversed(entries)][:limit]
    for warning in warnings:
        if not as_json:
            click.echo(f"warning: {strip_controls(warning)}", err=True)  # journal lines are untrusted
    emit({"entries": rows, "warnings": warnings}, as_json, lambda d: "\n".join(
        f"{r['id']}  {when(r['at']):>8}  {r['action']}{'  (undone)' if r['undone'] else ''}"
        f"{'' if r['complete'] else '  (INTERRUPTED: rcs-tui doctor --fix rolls it back)'}  {', '.join(r['files'])}"
        for r in d["entries"]) or "journal is empty")
