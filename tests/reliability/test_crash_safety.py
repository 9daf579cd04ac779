"""kill -9 of `rcs-tui state clear`, `task override` and `undo` at random moments, many times.

After every kill each file the command may touch holds either its old bytes or the bytes an
uninterrupted run of the same command writes (timestamps normalised), never a torn mix; the journal
stays readable line by line (a torn last line is skipped by `read_journal`), and afterwards the
store still works: the lock is free, a clear applies and `undo` restores the exact before-images.

The killed commands are forks of a process that has already started and imported rcs-tui
(`cli_forks.py`): each run then costs only the command's own work, and the random moments all fall
within it rather than mostly in the interpreter's start. A plain `rcs-tui` run must leave the same
bytes as a fork's (`reference`).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcs_tui.state.journal import interrupted, read_journal, undo
from rcs_tui.state.txn import JOURNAL_REL
from tests.conftest import RCS_TUI
from tests.reliability.conftest import SESSION, build_busy_tree

STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
WATCHED = [".rcs/state/forge-state.json", f".rcs/state/sessions/{SESSION}/forge-state.json",
           ".rcs/state/skill-active-state.json", f".rcs/state/sessions/{SESSION}/skill-active-state.json",
           ".rcs/tasks/t1/state.json"]
COMMANDS = {
    "clear": ["state", "clear", "--mode", "forge", "--session-id", SESSION, "--json"],
    "override": ["task", "override", "t1", "--to", "review", "--reason", "crash test", "--json"],
    "undo": ["undo", "--json"],
}


def files(root: Path) -> dict[str, bytes | None]:
    return {rel: (root / rel).read_bytes() if (root / rel).exists() else None for rel in WATCHED}


def norm(data: bytes | None) -> bytes | None:
    return None if data is None else STAMP.sub(b"<T>", data)


def cli(root: Path, args: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([RCS_TUI, *args, "--root", str(root)], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def template(base: Path, kind: str) -> Path:
    """A tree ready for `kind`; for undo, a clear has already been applied through the CLI."""
    root = base / f"template-{kind}"
    root.mkdir()
    build_busy_tree(root)
    if kind == "undo":
        assert cli(root, COMMANDS["clear"]).returncode == 0
    return root


class Forks:
    """The fork server (`cli_forks.py`): `start` runs a command in a fresh fork, `wait` reaps it."""

    def __init__(self, base: Path) -> None:
        self.stderr = base / "fork-stderr.txt"
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("cli_forks.py"))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _ask(self, line: str) -> int:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, f"the fork server ended ({self.proc.wait(10)})"
        return int(answer)

    def start(self, root: Path, args: list[str]) -> int:
        return self._ask(json.dumps([[*args, "--root", str(root)], str(self.stderr)]))

    def wait(self) -> int:
        code = self._ask("wait")
        err = self.stderr.read_text(errors="replace")
        assert "Traceback" not in err, err
        return code

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(10)


def reference(base: Path, tpl: Path, kind: str, forks: Forks) -> tuple[dict[str, bytes | None], float]:
    """What an uninterrupted run leaves (normalised), and how long a forked command takes (median of 3).
    A plain `rcs-tui` run leaves exactly what the forks do."""
    times, after = [], []
    for i in range(3):
        root = base / f"ref-{kind}-{i}"
        shutil.copytree(tpl, root, symlinks=True)
        t = time.monotonic()
        forks.start(root, COMMANDS[kind])
        assert forks.wait() == 0
        times.append(time.monotonic() - t)
        after.append({rel: norm(b) for rel, b in files(root).items()})
    root = base / f"ref-{kind}-exec"
    shutil.copytree(tpl, root, symlinks=True)
    assert cli(root, COMMANDS[kind]).returncode == 0
    assert {rel: norm(b) for rel, b in files(root).items()} == after[0] == after[-1]
    return after[0], statistics.median(times)


def kill_at(forks: Forks, root: Path, args: list[str], delay: float) -> int:
    pid = forks.start(root, args)
    time.sleep(delay)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return forks.wait()


def check_journal(root: Path) -> int:
    """Every line is a whole entry or an entry cut short by a crash (never garbage); returns the cut ones."""
    raw = (root / JOURNAL_REL).read_bytes() if (root / JOURNAL_REL).exists() else b""
    torn = markers = 0
    for i, line in enumerate(raw.splitlines()):
        try:
            doc = json.loads(line)
            assert isinstance(doc, dict), f"journal line {i + 1} is not an entry"
            markers += "commit" in doc or "abort" in doc or doc.get("state") == "aborted"
        except ValueError:
            assert line.startswith(b"{"), f"journal line {i + 1} is neither an entry nor a cut one: {line[:80]!r}"
            torn += 1
    entries = read_journal(root)  # never raises, whatever the tail looks like
    assert len(entries) == len(raw.splitlines()) - torn - markers
    return torn


def roll_back_interrupted(root: Path) -> None:
    """A kill between the write-ahead entry and its commit marker leaves an entry undo can roll back."""
    pending = interrupted(read_journal(root))
    assert len(pending) <= 1
    if pending:
        undo(root, pending[0]["id"])


def crash_many(tmp_path: Path, kind: str, kills: int, seed: int) -> dict[str, int]:
    forks = Forks(tmp_path)
    try:
        return _crash_many(tmp_path, kind, kills, seed, forks)
    finally:
        forks.close()


def _crash_many(tmp_path: Path, kind: str, kills: int, seed: int, forks: Forks) -> dict[str, int]:
    rng = random.Random(seed)
    tpl = template(tmp_path, kind)
    old = {rel: norm(b) for rel, b in files(tpl).items()}
    new, duration = reference(tmp_path, tpl, kind, forks)
    assert old != new, "the command changes nothing: the test would prove nothing"
    outcomes = {"killed": 0, "old": 0, "new": 0, "mixed": 0}
    journal_carry = (tpl / JOURNAL_REL).read_bytes() if (tpl / JOURNAL_REL).exists() else b""
    for i in range(kills):
        root = tmp_path / f"run-{kind}-{i}"
        shutil.copytree(tpl, root, symlinks=True)
        (root / JOURNAL_REL).parent.mkdir(parents=True, exist_ok=True)
        (root / JOURNAL_REL).write_bytes(journal_carry)
        code = kill_at(forks, root, COMMANDS[kind], rng.uniform(0.05, 1.1) * duration)
        outcomes["killed"] += code == -signal.SIGKILL
        # The reference runs time the command only roughly (a busy machine slows some runs, not others):
        # follow what the kills find, so that about two in three land before the command ends.
        duration *= 1.1 if code == -signal.SIGKILL else 0.6
        now = {rel: norm(b) for rel, b in files(root).items()}
        for rel, content in now.items():
            assert content in (old[rel], new[rel]), f"kill {i} ({kind}): {rel} is neither old nor new:\n{content!r}"
        state = "old" if now == old else "new" if now == new else "mixed"
        outcomes[state] += 1
        check_journal(root)
        # A kill between the write-ahead entry and its commit marker leaves an interrupted entry, whether
        # or not a file was replaced yet ("old" then): roll it back either way, as an operator would, so
        # the next run starts from a journal with nothing pending.
        if state == "mixed" or interrupted(read_journal(root)):
            roll_back_interrupted(root)
            if state != "new":
                assert {rel: norm(b) for rel, b in files(root).items()} == old, f"kill {i}: roll back left a mix"
        if not (kind == "undo" and state == "new"):  # a finished undo leaves nothing for the next run to undo
            journal_carry = (root / JOURNAL_REL).read_bytes()
        shutil.rmtree(root)
    return outcomes


def assert_store_still_works(tmp_path: Path) -> None:
    """After the kills: lock free, a clear applies, undo restores the exact bytes it replaced."""
    root = tmp_path / "after"
    root.mkdir()
    build_busy_tree(root)
    before = files(root)
    assert cli(root, COMMANDS["clear"]).returncode == 0
    assert files(root) != before
    proc = cli(root, COMMANDS["undo"])
    assert proc.returncode == 0, proc.stderr
    assert files(root) == before


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_kill_9_leaves_old_or_new(tmp_path, kind):
    outcomes = crash_many(tmp_path, kind, kills=12, seed=sorted(COMMANDS).index(kind))
    assert outcomes["killed"] >= 3, f"the kills never landed before the command finished: {outcomes}"


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_kill_9_leaves_old_or_new_many(tmp_path, kind):
    outcomes = crash_many(tmp_path, kind, kills=150, seed=7)
    assert outcomes["killed"] >= 30, outcomes
    assert outcomes["old"] and outcomes["new"], f"kills never straddled the write: {outcomes}"


def test_torn_journal_tail_then_undo(tmp_path):
    """A journal whose last line was torn by a crash still reads, and undo of the last whole entry works."""
    root = tmp_path / "p"
    root.mkdir()
    build_busy_tree(root)
    before = files(root)
    assert cli(root, COMMANDS["clear"]).returncode == 0
    journal = root / JOURNAL_REL
    whole = journal.read_bytes()
    journal.write_bytes(whole + whole[: len(whole) // 2])  # a second entry cut mid-write
    assert len(read_journal(root)) == 1
    proc = cli(root, COMMANDS["undo"])
    assert proc.returncode == 0, proc.stderr
    assert files(root) == before
    assert check_journal(root) == 1
    assert len(read_journal(root)) == 2


def test_store_still_works_after_kills(tmp_path):
    crash_many(tmp_path, "clear", kills=4, seed=3)
    assert_store_still_works(tmp_path)
