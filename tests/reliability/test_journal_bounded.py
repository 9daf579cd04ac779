"""The journal is untrusted and may be huge: read newest first in bounded memory, rotated at a size limit,
malformed lines skipped with a warning naming the line, never written into once another process rotated it
mid-entry; undo of a task move also takes its transcript line back; temp files of a killed write are found and
removed by the doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rcs_tui.state import ops, tasks, txn
from rcs_tui.state.journal import find_entry, load, undo
from tests import statefix as sf
from tests.conftest import tree_digest
from tests.fixtures_tasks import make_task

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for m in ("forge", "team", "ultrawork"):
        sf.mode(root, m, current_phase="executing")
    sf.canonical(root, ["forge", "team", "ultrawork"])
    return root


@pytest.mark.parametrize("bad", ['{"id": "x1", "files": ["oops"]}', '{"id": "x2", "files": [{"path": null}]}',
                                 '{"id": 7, "files": []}', "garbage \x00 here", '["a list"]',
                                 '{"id": "x3", "files": [], "appends": [{"path": 1}]}'])
def test_malformed_lines_are_skipped_with_a_warning_naming_the_line(tree, run_cli, bad):
    ops.plan_clear(tree, "forge", ops.ROOT_SCOPE).run(tree)
    journal = tree / JOURNAL
    journal.write_bytes(journal.read_bytes() + bad.encode() + b"\n")
    r = run_cli("journal", "--json", "--root", str(tree))
    assert r.code == 0 and len(r.json["entries"]) == 1
    assert r.json["warnings"] and "line 2" in r.json["warnings"][0], r.json
    r = run_cli("journal", "--root", str(tree))
    assert r.code == 0 and "line 2" in r.stderr
    r = run_cli("doctor", "--json", "--root", str(tree))
    assert any(f["kind"] == "journal-line" and "line 2" in f["message"] for f in r.json["findings"]), r.stdout
    r = run_cli("undo", "--json", "--root", str(tree))
    assert r.code == 0, r.stderr
    assert (tree / ".rcs/state/forge-state.json").exists()


def test_huge_journal_is_read_in_bounded_memory(tree, tmp_path):
    """A 200 MB journal: `journal`, `undo --dry-run` and `doctor` stay far below its size in memory: their
    peak grows by well under half the journal's size over the same reads of a one-entry journal (the floor,
    measured the same way in the same run, so the interpreter's own size does not count)."""
    ops.plan_clear(tree, "forge", ops.ROOT_SCOPE).run(tree)
    journal = tree / JOURNAL
    last = journal.read_bytes()
    small = tmp_path / "small"
    (small / JOURNAL).parent.mkdir(parents=True)
    (small / JOURNAL).write_bytes(last)
    filler = json.dumps({"state": "done", "id": "old", "action": "x", "files": [], "pad": "p" * 1_000_000}) + "\n"
    with open(journal, "wb") as fh:
        for _ in range(200):
            fh.write(filler.encode())
        fh.write(last)
    code = ("import sys; from pathlib import Path; from rcs_tui.state.journal import find_entry, "
            "find_interrupted, load; root = Path(sys.argv[1]);"
            "load(root, 20); find_entry(root, None); find_interrupted(root);"
            "print(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM')))")

    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the forked copy of this (large) test process.
    def peak_kb(root: Path) -> int:
        return int(subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True,
                                  check=True).stdout)

    grown = peak_kb(tree) - peak_kb(small)
    assert grown < 80_000, f"reading a 200 MB journal took {grown} kB more at peak than a one-entry journal"


def test_rotation_keeps_undo_working_and_says_when_an_entry_is_gone(tree, monkeypatch):
    monkeypatch.setattr(txn, "JOURNAL_ROTATE_BYTES", 1500)
    tdir = make_task(tree, "t1", "codegen")
    task_before = tree_digest(tdir)
    first = tasks.apply_plan(tree, tasks.plan_override(tree, "t1", "review", "r", actor="op"), actor="op")
    ids = [first["journal_id"]]
    for mode in ("team", "ultrawork"):
        ids.append(ops.plan_clear(tree, mode, ops.ROOT_SCOPE).run(tree)["journal_id"])
    assert (tree / ".rcs/logs/rcs-tui-journal.1.jsonl").exists(), "the journal never rotated"
    assert ids[0] not in (tree / JOURNAL).read_text()
    undo(tree, ids[0])
    assert tree_digest(tdir) == task_before
    for _ in range(txn.JOURNAL_KEEP + 2):
        sf.mode(tree, "forge", current_phase="executing")
        sf.canonical(tree, ["forge"])
        ops.plan_clear(tree, "forge", ops.ROOT_SCOPE).run(tree)
    with pytest.raises(txn.TxnError) as err:
        find_entry(tree, ids[1])
    assert "rotates" in str(err.value) and ids[1] in str(err.value)
    assert len(list((tree / ".rcs/logs").glob("rcs-tui-journal*.jsonl"))) <= txn.JOURNAL_KEEP + 1


def test_undo_of_a_task_override_takes_the_transcript_line_back(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    tdir = make_task(root, "t1", "codegen")
    before = tree_digest(tdir)
    plan = tasks.plan_override(root, "t1", "review", "because", actor="op")
    tasks.apply_plan(root, plan, actor="op")
    assert tree_digest(tdir) != before
    # the runtime appends its own line after ours; undo removes only ours
    with open(tdir / "transcript.jsonl", "ab") as fh:
        fh.write(b'{"actor": "runtime", "to": "review"}\n')
    undo(root)
    lines = (tdir / "transcript.jsonl").read_text().splitlines()
    assert not any('"override"' in line for line in lines), lines
    assert lines[-1] == '{"actor": "runtime", "to": "review"}'
    assert json.loads((tdir / "state.json").read_text())["phase"] == "codegen"


def test_undo_of_an_override_alone_restores_the_transcript_bytes(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    tdir = make_task(root, "t1", "codegen")
    before = tree_digest(tdir)
    tasks.apply_plan(root, tasks.plan_override(root, "t1", "review", "because", actor="op"), actor="op")
    undo(root)
    assert tree_digest(tdir) == before


def test_doctor_removes_temp_files_left_by_a_killed_write(tree, run_cli):
    leftover = tree / ".rcs/state/.forge-state.json.0123456789.rcs-tui.tmp"
    leftover.write_bytes(b"half")
    runtime_tmp = tree / ".rcs/state/.rt-5.tmp"
    runtime_tmp.write_bytes(b"theirs")
    r = run_cli("doctor", "--json", "--root", str(tree))
    [f] = [f for f in r.json["findings"] if f["kind"] == "leftover-temp"]
    assert leftover.name in f["message"]
    r = run_cli("doctor", "--fix", "--json", "--root", str(tree))
    assert not leftover.exists() and runtime_tmp.read_bytes() == b"theirs"
    assert not [f for f in r.json["fix"]["failed"]], r.stdout


def test_load_returns_newest_entries(tree):
    for mode in ("forge", "team"):
        ops.plan_clear(tree, mode, ops.ROOT_SCOPE).run(tree)
    entries, warnings = load(Path(tree), limit=1)
    assert [e["action"] for e in entries] == ["state clear team"] and warnings == []


def test_an_action_too_large_to_undo_is_refused_before_anything_changes(tmp_path, monkeypatch):
    """`state clear --all-sessions` over many sessions once wrote an entry longer than the reader reads, said
    "cleared", and `undo` then found no such entry. An entry the reader would not return is now refused
    before any file changes, saying why and what to do; a smaller action still goes through."""
    import rcs_tui.state.journal_format as fmt

    root = tmp_path / "proj"
    for i in range(40):
        sf.mode(root, "forge", f"s-{i:03d}", current_phase="executing", notes="x" * 400)
        sf.canonical(root, ["forge"], f"s-{i:03d}")
    monkeypatch.setattr(fmt, "MAX_LINE", 16 * 1024)  # the reader's limit, scaled to this tree
    before = tree_digest(root)
    with pytest.raises(txn.TxnError) as refused:
        ops.plan_clear(root, "forge", all_sessions=True).run(root)
    message = str(refused.value)
    assert "cannot be recorded so that it can be undone" in message and "nothing was changed" in message
    assert "one session" in message
    after = {k: v for k, v in tree_digest(root).items() if not k.endswith("rcs-tui.lock")}
    assert after == before  # no state file changed and no journal entry was written
    assert load(root)[0] == []
    done = ops.plan_clear(root, "forge", "s-000").run(root)  # a small action is recorded and undoable
    assert find_entry(root, done["journal_id"]) is not None


def test_a_huge_journal_without_newlines_is_read_within_a_bound(tree, run_cli):
    """A 20 GB sparse journal (NUL bytes, no newline) once kept `journal`, `undo` and `doctor` reading for
    minutes. Only its newest part is read (a journal that rotates never grows that large), and each
    command says so instead of hanging."""
    import time

    done = ops.plan_clear(tree, "forge", ops.ROOT_SCOPE).run(tree)  # one real entry first
    path = tree / JOURNAL
    with path.open("r+b") as fh:
        fh.truncate(20 * 1024**3)  # a hole of NUL bytes after the entry, no newline
    started = time.monotonic()
    listing = run_cli("journal", "--json", "--root", str(tree), timeout=60)
    doctor = run_cli("doctor", "--json", "--root", str(tree), timeout=60)
    undo = run_cli("undo", done["journal_id"], "--root", str(tree), timeout=60)
    assert time.monotonic() - started < 45
    assert listing.code == 0 and "only its newest entries are shown" in listing.stdout + listing.stderr
    assert doctor.code in (0, 3)
    assert undo.code == 1 and "only its newest entries are shown" in undo.stdout + undo.stderr + undo.error


def test_a_journal_rotated_by_another_process_mid_entry_is_never_written_into(project, monkeypatch):
    """The entry's state is marked in place at its offset. If another process rotates the journal and starts a
    new one meanwhile, that offset belongs to someone else's file: writing "done" there used to punch NUL
    bytes and a stray word into the new journal. Now the mark refuses, the change is rolled back, and both
    journal files keep their bytes."""
    op = ops.plan_clear(project, "ultrawork")
    journal = project / JOURNAL
    rotated = project / ".rcs/logs/rcs-tui-journal.1.jsonl"
    theirs = b'{"state": "done", "id": "OTHER", "files": []}\n'
    real_swap = txn._swap

    def rotate_then_swap(step):
        if not rotated.exists():
            os.replace(journal, rotated)
            journal.write_bytes(theirs)
        real_swap(step)

    monkeypatch.setattr(txn, "_swap", rotate_then_swap)
    before = tree_digest(project / ".rcs/state")
    with pytest.raises(txn.TxnError, match="rotated, truncated or replaced by another process"):
        op.run(project)
    assert tree_digest(project / ".rcs/state") == before  # every file restored
    assert journal.read_bytes() == theirs
    [line] = rotated.read_text().splitlines()
    assert json.loads(line)["state"] == "pending"  # left for the doctor, which shows it as interrupted



def test_two_actions_in_one_second_never_share_a_journal_id(tree, monkeypatch):
    """Ids were the second plus 24 random bits: at the hundreds of entries a second a busy runtime's refusals
    cause, two entries got one id within a minute and `undo ID` could take the wrong one. Random values
    that agree in their first 24 bits now still give two ids."""
    import uuid as uuid_mod

    values = iter([uuid_mod.UUID(int=(0xABCDEF << 104) | (n << 80)) for n in range(1, 1000)])
    real = uuid_mod.uuid4
    monkeypatch.setattr(uuid_mod, "uuid4", lambda: next(values))
    try:
        first = ops.plan_clear(tree, "forge", ops.ROOT_SCOPE).run(tree)["journal_id"]
        second = ops.plan_clear(tree, "team", ops.ROOT_SCOPE).run(tree)["journal_id"]
    finally:
        monkeypatch.setattr(uuid_mod, "uuid4", real)
    assert first != second
    assert find_entry(tree, first)["action"] == "state clear forge"
    assert find_entry(tree, second)["action"] == "state clear team"
