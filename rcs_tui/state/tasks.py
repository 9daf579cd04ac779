"""Task directories (`.rcs/tasks/<id>/`): read state, artifacts and transcript; plan lifecycle moves.

Reading never raises for damaged artifacts (they become `Doc.error`), but a task whose `state.json`
cannot be trusted (malformed, unknown phase) is refused with the file and field named, so no move
is ever decided on a guess. Every move is a `txn.Plan`: `state.json` rewritten atomically against
the digest it was read with (extra fields kept), plus one transcript line appended.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.machine import StateMachine, load_task_lifecycle
from rcs_tui.core.modes import check_name
from rcs_tui.core.task_lifecycle import (
    CODE_FILES,
    DIFF_PATCH,
    JSON_ARTIFACTS,
    Artifacts,
    Doc,
    Verdict,
    evaluate,
    is_terminal,
)
from rcs_tui.files.dirread import DirRead
from rcs_tui.files.fsafe import Tree
from rcs_tui.files.io import JsonRead, digest, dump_json, loads_strict, read_bounded, read_json, rel_of
from rcs_tui.files.layout import Layout
from rcs_tui.state.txn import Append, FileChange, Plan, TxnError, apply, now_iso

TRANSCRIPT = "transcript.jsonl"
STATE = "state.json"
MAX_CODE_FILES = 10_000
MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024
Kind = Literal["advance", "override", "redo"]


class TaskError(TxnError):
    """A task cannot be read or moved; the message names the file/field and nothing was changed."""


@dataclass(frozen=True)
class Transcript:
    """The task's append-only log: parsed entries and the numbers of lines that are not JSON objects."""

    path: Path
    entries: tuple[dict[str, Any], ...] = ()
    bad_lines: tuple[int, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Task:
    """One task as read from disk; `raw` is the exact `state.json` bytes decisions are made on."""

    id: str
    dir: Path
    raw: bytes
    data: dict[str, Any]
    phase: str
    artifacts: Artifacts
    transcript: Transcript

    @property
    def state_path(self) -> Path:
        return self.dir / STATE

    @property
    def actors(self) -> dict[str, Any]:
        actors = self.data.get("actors")
        return actors if isinstance(actors, dict) else {}


def tasks_dir(root: Path) -> Path:
    return Layout(root).tasks


def read_artifacts(task_dir: Path, listing: Collection[str] | None = None, *,
                   opened: DirRead | None = None) -> Artifacts:
    """The facts the guards inspect; damaged files are described, never raised. `listing`: the names in
    `task_dir` just listed; an artifact under a name not among them is missing without being looked up.
    `opened`: `task_dir` already open (its files read through it and its subdirectories opened relative to
    it, with the same answers as reading each by its path within `task_dir`)."""

    def absent(rel: str) -> bool:
        return listing is not None and rel.split("/", 1)[0] not in listing

    docs = {}
    subdirs: dict[str, DirRead] = {}
    try:
        for rel in JSON_ARTIFACTS:
            if absent(rel):
                docs[rel] = Doc(False, None, None)
                continue
            head, _, leaf = rel.partition("/")
            if opened is None or "/" in leaf:
                r = read_json(task_dir / rel, within=task_dir, expect=None)
            elif not leaf:
                r = opened.read_json(head, expect=None)
            else:
                sub = subdirs.get(head)
                if sub is None:
                    sub = subdirs[head] = opened.child(head)
                r = sub.read_json(leaf, expect=None)
            docs[rel] = Doc(r.exists, r.error, r.data)
    finally:
        for sub in subdirs.values():
            sub.close()
    diff = task_dir / DIFF_PATCH
    has_diff = not absent(DIFF_PATCH) and diff.is_file() and not diff.is_symlink() and diff.stat().st_size > 0
    code = () if absent(CODE_FILES) else tuple(_code_files(task_dir / CODE_FILES))
    return Artifacts(docs, has_diff, code)


def _code_files(code: Path) -> list[str]:
    """Regular files under `code/` (links not followed), sorted; stops after visiting MAX_CODE_FILES entries,
    so a huge tree costs bounded time."""
    files: list[str] = []
    if code.is_symlink() or not code.is_dir():
        return files
    stack, visited = [code], 0
    while stack and visited < MAX_CODE_FILES:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    visited += 1
                    if visited > MAX_CODE_FILES:
                        break
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        files.append(os.path.relpath(entry.path, code))
        except OSError:
            continue
    return sorted(files)


def read_transcript(path: Path) -> Transcript:
    """Parse the newest `MAX_TRANSCRIPT_BYTES` of transcript.jsonl line by line; a torn or foreign line
    is reported, never fatal. A symlink, FIFO or other non-regular file is an error (appends go there)."""
    got = read_bounded(path, max_bytes=MAX_TRANSCRIPT_BYTES, part="tail", follow_links=False)
    if not got.exists:
        return Transcript(path)
    if got.raw is None:
        return Transcript(path, error=f"{path.name} {got.error}")
    lines = got.raw.splitlines()
    first = 1
    if got.truncated and lines:
        lines, first = lines[1:], 2  # the seek may have cut the first line
    entries, bad = [], []
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        try:
            item = loads_strict(line)
        except (ValueError, RecursionError):  # incl. over-long integers, NaN
            item = None
        if isinstance(item, dict):
            entries.append(item)
        else:
            bad.append(number)
    return Transcript(path, tuple(entries), tuple(bad))


def load_task(root: Path, task_id: str, machine: StateMachine | None = None) -> Task:
    """Read one task, refusing ids that could escape `.rcs/tasks/` and state it cannot trust."""
    tdir, r, phase = _read_state(root, task_id, machine or load_task_lifecycle())
    return Task(task_id, tdir, r.raw or b"", r.data, phase, read_artifacts(tdir), read_transcript(tdir / TRANSCRIPT))


def _read_state(root: Path, task_id: str, m: StateMachine) -> tuple[Path, JsonRead, str]:
    """The task's directory, its checked `state.json` and phase; a TaskError says what is wrong."""
    check_name(task_id, "task id")
    base = tasks_dir(root)
    tdir = base / task_id
    if tdir.is_symlink() or not tdir.is_dir():
        raise TaskError(f"no task {task_id!r} in {rel_of(root, base)}/", kind=kinds.NOT_FOUND)
    spath = tdir / STATE
    r = Tree(root).read_json(spath)  # as the apply step will read it again: no link at any step
    return tdir, r, _checked_phase(rel_of(root, spath), r, m)


def _checked_phase(rel: str, r: JsonRead, m: StateMachine) -> str:
    """The phase of a task's `state.json` as read (`rel`: its path under the root); a TaskError names the
    file and field when it cannot be trusted."""
    if not r.exists:
        raise TaskError(f"{rel}: missing")
    if r.error or r.raw is None:
        raise TaskError(f"{rel}: {r.error}")
    phase = r.data.get("phase")
    if phase is None:
        raise TaskError(f'{rel}: field "phase" is missing')
    if not isinstance(phase, str):
        raise TaskError(f'{rel}: field "phase" must be a string, got {type(phase).__name__}')
    if phase not in m.states:
        raise TaskError(f'{rel}: field "phase": unknown phase {phase[:80]!r}; '
                        f"valid phases: {', '.join(m.states)}")
    if "actors" in r.data and not isinstance(r.data["actors"], dict):
        raise TaskError(f'{rel}: field "actors" must be an object')
    return phase


def list_tasks(root: Path) -> list[dict[str, Any]]:
    """One summary per task directory; a task that cannot be read carries its error instead.

    A summary needs the state and the artifacts only: the transcripts (up to 4 MB each) are not read, the
    lifecycle is parsed once for every task, and each task directory is opened and listed once, its files
    read relative to it, so that nothing is looked up by its full path. A task whose directory holds a link,
    or whose `state.json` is not a plain file, is read the way a move reads it, with the same words."""
    base = tasks_dir(root)
    try:
        with os.scandir(base) as it:
            entries = sorted((e.name, e.is_symlink(), e.is_dir()) for e in it)
    except OSError:
        return []
    machine = load_task_lifecycle()
    base_rel = rel_of(root, base)
    out: list[dict[str, Any]] = []
    with DirRead(base, within=root, listed=False) as top:
        # Held open only when no link leads to it from the root (as a move walks there): else each task is
        # read the way a move reads it, which says why.
        direct = top.real == os.path.join(os.path.realpath(root), ".rcs", "tasks")
        for name, link, is_dir in entries:
            if not is_dir or name.startswith("."):
                continue
            try:
                check_name(name, "task id")
                if link:
                    raise TaskError(f"no task {name!r} in {base_rel}/", kind=kinds.NOT_FOUND)
                out.append(_summary(root, base_rel, top if direct else None, name, machine))
            except (TxnError, ValueError) as exc:
                out.append({"id": name, "phase": None, "justified": [], "error": str(exc)})
    return out


def _summary(root: Path, base_rel: str, top: DirRead | None, name: str, machine: StateMachine) -> dict[str, Any]:
    """One task's line of `task list`: through `top` (the tasks directory held open) when its directory is a
    plain one holding a plain `state.json`; anything unusual is read the way a move reads it."""
    if top is not None:
        with top.child(name) as opened:
            if not opened.linked and opened.error is None and opened.regular(STATE):
                phase = _checked_phase(f"{base_rel}/{name}/{STATE}", opened.read_json(STATE), machine)
                return _line(name, phase, read_artifacts(opened.directory, opened.names, opened=opened), machine)
    tdir, _, phase = _read_state(root, name, machine)
    try:
        listing: set[str] | None = set(os.listdir(tdir))
    except OSError:
        listing = None
    return _line(name, phase, read_artifacts(tdir, listing), machine)


def _line(name: str, phase: str, artifacts: Artifacts, machine: StateMachine) -> dict[str, Any]:
    return {"id": name, "phase": phase, "justified": [v.to for v in evaluate(phase, artifacts, machine) if v.ok],
            "error": None}


def next_report(task: Task, machine: StateMachine | None = None) -> dict[str, Any]:
    """Which moves the artifacts justify now and why each other one is not (the `next` answer)."""
    m = machine or load_task_lifecycle()
    verdicts = evaluate(task.phase, task.artifacts, m)
    terminal = is_terminal(task.phase, m)
    return {
        "id": task.id,
        "phase": task.phase,
        "terminal": terminal,
        "justified": [v.as_dict() for v in verdicts if v.ok],
        "not_justified": [v.as_dict() for v in verdicts if not v.ok],
        "reachable": [s for s in m.states if s in m.reachable_from(task.phase)],
        "redo": (f"done is terminal; reopen with `rcs-tui task redo {task.id} --reason R`" if terminal
                 else f"`rcs-tui task redo {task.id} --reason R` re-runs {task.phase}"),
    }


def _writable(task: Task, root: Path) -> None:
    if task.transcript.error:
        raise TaskError(f"{rel_of(root, task.transcript.path)}: {task.transcript.error}; nothing was changed")


def _plan(root: Path, task: Task, kind: Kind, to: str, new_data: dict[str, Any], reason: str,
          actor: str, at: str | None) -> Plan:
    _writable(task, root)
    line = json.dumps({"at": at or now_iso(), "actor": actor, "from": task.phase, "to": to,
                       "reason": reason, "kind": kind}, ensure_ascii=False)
    change = FileChange(task.state_path, "write", dump_json(new_data), expect=digest(task.raw),
                        why=f"phase {task.phase} → {to}")
    append = Append(task.dir / TRANSCRIPT, line, why=f"record the {kind}")
    return Plan(action=f"task {kind}", changes=(change,), appends=(append,),
                summary={"task": task.id, "kind": kind, "from": task.phase, "to": to, "changed": True})


def _unchanged(task: Task, kind: Kind, why: str) -> Plan:
    return Plan(action=f"task {kind}", summary={"task": task.id, "kind": kind, "from": task.phase,
                                                "to": task.phase, "changed": False, "why": why})


def _check_phase(to: str, m: StateMachine) -> None:
    if to not in m.states:
        raise TaskError(f"unknown phase {to[:80]!r}; phases: {', '.join(m.states)}", kind=kinds.BAD_INPUT)


def _with_phase(task: Task, to: str) -> dict[str, Any]:
    data = dict(task.data)
    data["phase"] = to
    return data


def plan_advance(root: Path, task_id: str, to: str, *, actor: str, at: str | None = None) -> Plan:
    """Move along one graph edge whose guard holds; the same phase again changes nothing."""
    m = load_task_lifecycle()
    task = load_task(root, task_id, m)
    _check_phase(to, m)
    if to == task.phase:
        return _unchanged(task, "advance", f"task is already in {to} (re-running a phase is idempotent)")
    if is_terminal(task.phase, m):
        raise TaskError(f"task {task.id} is {task.phase} (terminal) and does not advance; "
                        f"reopen it with `rcs-tui task redo {task.id} --reason R`")
    verdict: Verdict | None = next((v for v in evaluate(task.phase, task.artifacts, m) if v.to == to), None)
    if verdict is None:
        hint = (" To force it, `rcs-tui task override` with a reason." if to in m.reachable_from(task.phase) else "")
        raise TaskError(f"cannot advance {task.id} from {task.phase} to {to}: not an edge of the task "
                        f"lifecycle (phases are never skipped). Valid next phases: "
                        f"{', '.join(s for s in m.next_states(task.phase) if s != task.phase)}.{hint}")
    if not verdict.ok:
        raise TaskError(f"cannot advance {task.id}: {verdict.why}")
    return _plan(root, task, "advance", to, _with_phase(task, to), verdict.why, actor, at)


def plan_override(root: Path, task_id: str, to: str, reason: str | None, *, actor: str,
                  at: str | None = None) -> Plan:
    """A human move past the guards: reason required, target reachable in principle."""
    m = load_task_lifecycle()
    text = (reason or "").strip()
    if not text:
        raise TaskError("override needs a non-empty --reason: every override is recorded with its reason",
                        kind=kinds.BAD_INPUT)
    task = load_task(root, task_id, m)
    _check_phase(to, m)
    if to == task.phase:
        return _unchanged(task, "override", f"task is already in {to}")
    reachable = [s for s in m.states if s in m.reachable_from(task.phase)]
    if to not in reachable:
        listed = ", ".join(reachable) or (f"none: {task.phase} is terminal; reopen it with "
                                          f"`rcs-tui task redo {task.id} --reason R`")
        raise TaskError(f"cannot override {task.id} from {task.phase} to {to}: {to} is not reachable from "
                        f"{task.phase} in the task lifecycle. Reachable phases: {listed}")
    return _plan(root, task, "override", to, _with_phase(task, to), text, actor, at)


def plan_redo(root: Path, task_id: str, reason: str | None, *, actor: str, at: str | None = None) -> Plan:
    """Re-run the current phase (next round, status pending); a terminal task reopens at the start."""
    m = load_task_lifecycle()
    text = (reason or "").strip()
    if not text:
        raise TaskError("redo needs a non-empty --reason: it is recorded in the transcript", kind=kinds.BAD_INPUT)
    task = load_task(root, task_id, m)
    to = m.initial[0] if is_terminal(task.phase, m) else task.phase
    data = _with_phase(task, to)
    actors = dict(task.actors)
    current = actors.get(to, {})
    if not isinstance(current, dict):
        raise TaskError(f'{rel_of(root, task.state_path)}: field "actors.{to}" must be an object')
    entry = dict(current)
    rnd = entry.get("round")
    entry["round"] = (rnd if isinstance(rnd, int) and not isinstance(rnd, bool) else 1) + 1
    entry["status"] = "pending"
    actors[to] = entry
    data["actors"] = actors
    return _plan(root, task, "redo", to, data, text, actor, at)


def apply_plan(root: Path, plan: Plan, *, actor: str, expect_plan: str | None = None) -> dict[str, Any]:
    """Apply a task plan through the transaction (lock, re-check, atomic write, journal); `expect_plan`:
    see `Plan.confirm`."""
    plan.confirm(root, expect_plan)
    result = dict(plan.summary)
    if not plan.changes:
        return result
    entry = apply(root, plan, actor=actor)
    result["journal_id"] = entry["id"]
    result["transcript"] = [rel_of(root, a.path) for a in plan.appends][0]
    return result
