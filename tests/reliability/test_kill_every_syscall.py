"""kill -9 at every file-changing system call of every mutating command.

A reference run under strace lists the command's file-changing syscalls (creating opens, writes,
renames, unlinks, truncates, mkdirs, chmods). The command is then re-run once per listed call with
strace injecting SIGKILL on entry to exactly that invocation (the call itself is suppressed), which
covers every point a crash can leave the disk in: between two file-changing calls the disk does not
change. After each kill every file the command touches holds its old or its new bytes, the journal
reads, and the doctor's repairs (roll back the interrupted entry, remove leftover temps) bring the
tree back to the old bytes exactly, or leave the new bytes when the entry had committed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from rcs_tui.files.fsafe import leftover_temps
from rcs_tui.project.doctor import diagnose, fix
from rcs_tui.state.journal import find_interrupted, load
from tests.conftest import RCS_TUI
from tests.reliability.conftest import SESSION, build_busy_tree

CHANGING = ("openat", "write", "pwrite64", "rename", "renameat", "renameat2", "unlink", "unlinkat", "ftruncate",
            "mkdir", "mkdirat", "fchmod")  # fsync is left out: after a process kill the page cache still holds it
STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|pid \d+")
WATCHED = [".rcs/state/forge-state.json", f".rcs/state/sessions/{SESSION}/forge-state.json",
           ".rcs/state/skill-active-state.json", f".rcs/state/sessions/{SESSION}/skill-active-state.json",
           ".rcs/tasks/t1/state.json", ".rcs/tasks/t1/transcript.jsonl"]
COMMANDS = {
    "clear": ["state", "clear", "--mode", "forge", "--session-id", SESSION, "--json"],
    "clear-all": ["state", "clear", "--mode", "forge", "--all-sessions", "--json"],
    "override": ["task", "override", "t1", "--to", "review", "--reason", "crash test", "--json"],
    "undo": ["undo", "--json"],
}
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def strace_usable() -> str | None:
    if not shutil.which("strace"):
        return "strace is not installed (apt-get install strace)"
    probe = subprocess.run(["strace", "-o", os.devnull, "true"], capture_output=True)
    return None if probe.returncode == 0 else f"strace cannot trace here: {probe.stderr.decode()[:200]}"


pytestmark = pytest.mark.skipif(strace_usable() is not None, reason=str(strace_usable()))


def files(root: Path) -> dict[str, bytes | None]:
    out = {}
    for rel in WATCHED:
        p = root / rel
        out[rel] = STAMP.sub(b"<T>", p.read_bytes()) if p.exists() else None
    return out


def template(base: Path, kind: str) -> Path:
    root = base / f"template-{kind}"
    root.mkdir()
    build_busy_tree(root)
    if kind == "undo":
        run(root, COMMANDS["override"])
        run(root, COMMANDS["clear"])
    return root


def run(root: Path, args: list[str], prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*(prefix or []), RCS_TUI, *args, "--root", str(root)], capture_output=True, text=True,
                          timeout=120, env=ENV)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def changing_calls(trace: str) -> list[tuple[str, int, str]]:
    """(syscall, its invocation number, the trace line) for each file-changing call of the reference run."""
    seen: Counter[str] = Counter()
    out = []
    for line in trace.splitlines():
        m = re.match(r"(\w+)\((.*)", line)
        if not m or m.group(1) not in CHANGING:
            continue
        name, args = m.groups()
        seen[name] += 1
        if name == "openat" and "O_CREAT" not in args and "O_TRUNC" not in args:
            continue
        if name == "write" and re.match(r"[12],", args):
            continue  # stdout / stderr
        out.append((name, seen[name], line[:100]))
    return out


def roll_back(root: Path) -> None:
    """What an operator does after a crash: `doctor --fix` limited to the crash's own findings."""
    ids = [f.id for f in diagnose(root, rp1_db=str(root / "no-rp1.db"))
           if f.kind in ("interrupted-action", "leftover-temp")]
    if ids:
        result = fix(root, diagnose(root, rp1_db=str(root / "no-rp1.db")), ids, rp1_db=str(root / "no-rp1.db"))
        assert not result["failed"], result


def kill_everywhere(tmp_path: Path, kind: str) -> dict[str, int]:
    tpl = template(tmp_path, kind)
    old = files(tpl)
    ref = tmp_path / f"ref-{kind}"
    shutil.copytree(tpl, ref, symlinks=True)
    trace = tmp_path / f"trace-{kind}.txt"
    proc = run(ref, COMMANDS[kind], ["strace", "-qq", "-o", str(trace), "-e", f"trace={','.join(CHANGING)}"])
    assert proc.returncode == 0, proc.stderr
    new = files(ref)
    assert new != old, "the command changes nothing: the test would prove nothing"
    calls = changing_calls(trace.read_text())
    assert len(calls) >= 8, calls
    tally = {"killed": 0, "pending": 0, "old": 0, "new": 0}
    for i, (name, nth, line) in enumerate(calls):
        root = tmp_path / f"run-{kind}-{i}"
        shutil.copytree(tpl, root, symlinks=True)
        inject = f"inject={name}:error=ENOSYS:signal=KILL:when={nth}"
        proc = run(root, COMMANDS[kind], ["strace", "-qq", "-o", os.devnull, "-e", f"trace={name}", "-e", inject])
        where = f"{kind}: kill before call {i} ({line})"
        tally["killed"] += proc.returncode == -signal.SIGKILL
        now = files(root)
        for rel, content in now.items():
            created_empty = rel.endswith(".jsonl") and old[rel] is None and content == b""
            assert content in (old[rel], new[rel]) or created_empty, f"{where}: {rel} is neither old nor new"
        load(root)  # the journal reads, whatever the kill left
        pending = find_interrupted(root)[0]
        tally["pending"] += bool(pending)
        roll_back(root)
        after = files(root)
        if pending:
            assert after == old, f"{where}: rolling back left {after}"
        else:
            assert after in (old, new), f"{where}: a mix without a journal entry to roll it back"
        tally["old" if after == old else "new"] += 1
        assert not leftover_temps(root), f"{where}: temps left after the doctor"
        assert find_interrupted(root)[0] == []
        shutil.rmtree(root)
    assert tally["killed"] >= len(calls) - 1, f"the injected kills did not land: {tally}"
    assert tally["pending"], tally
    return tally


@pytest.mark.parametrize("kind", ["clear", "override"])
def test_kill_at_every_changing_syscall(tmp_path, kind):
    kill_everywhere(tmp_path, kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["clear-all", "undo"])
def test_kill_at_every_changing_syscall_more_commands(tmp_path, kind):
    kill_everywhere(tmp_path, kind)
