"""Undo and redo as one history: after any sequence of clears, undos and redos the files on disk are what
that history says, `undo` offers exactly the actions in effect and `redo` exactly the ones undone; undoing an
undo puts the original back in effect, and a redo whose entry left the journal is a clear refusal."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rcs_tui.state import ops
from rcs_tui.state.redo import redo_operation, undo_operation
from rcs_tui.state.txn import TxnError
from tests import statefix as sf
from tests.statefix import append_journal, no_internal_error
from tests.statefix import cli_project as project

MODES = ("forge", "team", "ultrawork")


def seed(root: Path) -> dict[str, bytes | None]:
    for m in MODES:
        sf.mode(root, m, current_phase="executing")
    sf.canonical(root, list(MODES))
    return {m: (root / ".rcs/state" / f"{m}-state.json").read_bytes() for m in MODES}


def state(root: Path) -> dict[str, bytes | None]:
    """Each mode file's bytes (None: removed, as a clear in root does)."""
    paths = {m: root / ".rcs/state" / f"{m}-state.json" for m in MODES}
    return {m: p.read_bytes() if p.exists() else None for m, p in paths.items()}


def test_clear_undo_redo_undo_redo_leaves_the_clear_in_effect_and_nothing_to_redo(tmp_path):
    seed(tmp_path)
    ops.plan_clear(tmp_path, "forge", ops.ROOT_SCOPE).run(tmp_path)
    cleared = state(tmp_path)
    for step in (undo_operation, redo_operation, undo_operation, redo_operation):
        step(tmp_path).run(tmp_path)
    assert state(tmp_path) == cleared
    try:
        redo_operation(tmp_path)
    except TxnError as exc:
        assert "nothing to redo" in str(exc)
    else:
        raise AssertionError("redo offered to redo a clear that is in effect")
    undo_operation(tmp_path).run(tmp_path)  # and the clear can still be undone
    assert state(tmp_path)["forge"] != cleared["forge"]


def canonical_bytes(root: Path) -> bytes:
    return (root / ".rcs/state/skill-active-state.json").read_bytes()


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.one_of(st.tuples(st.just("clear"), st.sampled_from(MODES)),
                                st.just(("undo",)), st.just(("redo",))), min_size=1, max_size=14))
def test_any_sequence_of_clears_undos_and_redos_matches_the_history(steps):
    """The model: each clear is an action; `undo` takes back the action most recently put in effect,
    `redo` re-applies the one most recently taken back, and only while the files it would rewrite are as
    its undo left them (a later action changed them: refused, nothing written). A mode file holds its
    cleared bytes exactly while its clear is in effect."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        original = seed(root)
        in_effect: list[tuple[str, bytes | None]] = []  # (mode, its cleared bytes), last put in effect last
        taken_back: list[tuple[str, bytes | None, bytes]] = []  # (mode, cleared bytes, canonical its undo left)
        for step in steps:
            if step[0] == "clear":
                mode = step[1]
                if any(m == mode for m, _ in in_effect):
                    continue  # nothing to clear: no action, no journal entry
                ops.plan_clear(root, mode, ops.ROOT_SCOPE).run(root)
                in_effect.append((mode, state(root)[mode]))
            elif step[0] == "undo":
                if not in_effect:
                    try:
                        undo_operation(root)
                    except TxnError:
                        continue
                    raise AssertionError("undo offered something with no action in effect")
                undo_operation(root).run(root)
                mode, cleared = in_effect.pop()
                taken_back.append((mode, cleared, canonical_bytes(root)))
            else:
                if not taken_back:
                    try:
                        redo_operation(root)
                    except TxnError as exc:
                        assert "nothing to redo" in str(exc)
                        continue
                    raise AssertionError("redo offered something with nothing undone")
                mode, cleared, left = taken_back[-1]
                if canonical_bytes(root) != left:
                    before = state(root)
                    try:
                        redo_operation(root).run(root)
                    except TxnError as exc:
                        assert "changed since" in str(exc) and "nothing was changed" in str(exc)
                    else:
                        raise AssertionError("redo rewrote a file a later action had changed")
                    assert state(root) == before
                    continue
                redo_operation(root).run(root)
                taken_back.pop()
                in_effect.append((mode, cleared))
            now = state(root)
            holding = dict(in_effect)
            for m in MODES:
                want = holding[m] if m in holding else original[m]
                assert now[m] == want, (step, m)


# -- through the CLI: a redo whose entry is gone, and undo of an undo ---------------------------------------


def test_redo_of_an_entry_no_longer_in_the_journal_is_a_clear_refusal(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    append_journal(root, json.dumps({"state": "done", "id": "U9", "undoes": "ghost", "action": "undo x",
                                     "files": [], "appends": []}))
    res = run_cli("redo", "--root", str(root))
    no_internal_error(res)
    assert res.code == 1
    assert "cannot redo ghost: that entry is no longer in the journal" in res.error


def test_undoing_an_undo_puts_the_original_back_in_effect(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    state = root / ".rcs/state/forge-state.json"
    written = state.read_bytes()
    first = run_cli("undo", "--json", "--root", str(root)).json
    assert not state.exists()
    run_cli("undo", first["journal_id"], "--root", str(root))
    assert state.read_bytes() == written
    entries = run_cli("journal", "--json", "--root", str(root)).json
    rows = entries["entries"] if isinstance(entries, dict) else entries
    original = next(e for e in rows if e["id"] == first["undone"])
    assert not original.get("undone"), original



PHASES = ("plan_review", "codegen", "review", "test")


def task_files(root: Path) -> tuple[bytes, int]:
    """The task's state.json bytes and how many transcript lines it has."""
    tdir = root / ".rcs" / "tasks" / "t1"
    lines = (tdir / "transcript.jsonl").read_text().splitlines() if (tdir / "transcript.jsonl").exists() else []
    return (tdir / "state.json").read_bytes(), len(lines)


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(st.one_of(st.tuples(st.just("override"), st.sampled_from(PHASES)),
                                st.just(("undo",)), st.just(("redo",))), min_size=1, max_size=12))
def test_overrides_undos_and_redos_keep_state_and_transcript_together(steps):
    """A task override writes the phase and appends one transcript line; undo takes both back, redo puts both
    again; after every step the state file and the transcript say the same history."""
    from rcs_tui.state import tasks
    from tests.fixtures_tasks import make_task

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".rcs").mkdir()
        make_task(root, "t1", "planning")
        start = task_files(root)
        in_effect: list[tuple[bytes, int]] = []  # the files as each action in effect left them
        taken_back: list[tuple[tuple[bytes, int], tuple[bytes, int]]] = []  # (what it left, what its undo left)
        for step in steps:
            before = task_files(root)
            if step[0] == "override":
                try:
                    plan = tasks.plan_override(root, "t1", step[1], "property run", actor="prop")
                except TxnError:
                    continue  # not reachable from here: refused before anything is written
                if not plan.changes:
                    continue
                tasks.apply_plan(root, plan, actor="prop")
                in_effect.append(task_files(root))
                assert task_files(root)[1] == before[1] + 1
            elif step[0] == "undo":
                if not in_effect:
                    continue
                undo_operation(root).run(root)
                left = in_effect.pop()
                taken_back.append((left, task_files(root)))
                assert task_files(root)[1] == before[1] - 1  # exactly its line taken back
            else:
                if not taken_back:
                    continue
                left, undo_left = taken_back[-1]
                if task_files(root) != undo_left:
                    try:
                        redo_operation(root).run(root)
                    except TxnError:
                        assert task_files(root) == before
                        continue
                    raise AssertionError("redo rewrote a task a later action had changed")
                redo_operation(root).run(root)
                taken_back.pop()
                in_effect.append(task_files(root))
                assert task_files(root)[0] == left[0]  # the state the override wrote, again
            state = task_files(root)
            expected = in_effect[-1][0] if in_effect else start[0]
            assert state[0] == expected, step


def refusal(call) -> TxnError:
    try:
        call()
    except TxnError as exc:
        return exc
    raise AssertionError("not refused")


def test_undo_and_redo_name_what_they_did_and_take_the_entry_asked_for(tmp_path):
    from rcs_tui.core import error_kinds as kinds
    from rcs_tui.state import tasks
    from rcs_tui.state.journal import read_journal
    from tests.fixtures_tasks import make_task

    seed(tmp_path)
    make_task(tmp_path, "t1", "planning")
    first = tasks.apply_plan(tmp_path, tasks.plan_override(tmp_path, "t1", "codegen", "why not", actor="me"),
                             actor="me")["journal_id"]
    second = ops.plan_clear(tmp_path, "team", ops.ROOT_SCOPE).run(tmp_path)["journal_id"]
    op = undo_operation(tmp_path, first)  # the one asked for, not the newest
    assert op.result["undone"] == first and op.extra == {"undoes": first}
    assert op.result["restored"] == op.plan.summary["restores"] and op.result["restored"]
    op.run(tmp_path)
    not_undone = refusal(lambda: redo_operation(tmp_path, second))
    assert not_undone.args[0] == f"journal entry {second} is not undone; there is nothing to redo"
    assert kinds.kind_of(not_undone) == kinds.NOT_FOUND
    missing = refusal(lambda: redo_operation(tmp_path, "20200101T000000-000000000000"))
    assert missing.args[0] == "no journal entry '20200101T000000-000000000000'"
    assert kinds.kind_of(missing) == kinds.NOT_FOUND
    undo_operation(tmp_path, second).run(tmp_path)
    redo = redo_operation(tmp_path, first)  # not the most recently undone one: the one asked for
    assert redo.result["redone"] == first and redo.extra == {"redoes": first}
    redo.run(tmp_path)
    redo_operation(tmp_path).run(tmp_path)
    assert sorted(e["redoes"] for e in read_journal(tmp_path) if "redoes" in e) == sorted([first, second])
    nothing = refusal(lambda: redo_operation(tmp_path))
    assert nothing.args[0] == "nothing to redo: no journal entry is currently undone"
    assert kinds.kind_of(nothing) == kinds.NOT_FOUND


def test_a_redo_whose_files_changed_since_names_the_entry_and_keeps_the_kind(tmp_path):
    from rcs_tui.core import error_kinds as kinds

    seed(tmp_path)
    done = ops.plan_clear(tmp_path, "forge", ops.ROOT_SCOPE).run(tmp_path)["journal_id"]
    undo_operation(tmp_path).run(tmp_path)
    path = tmp_path / ".rcs/state/forge-state.json"
    path.write_bytes(path.read_bytes() + b"\n")  # the runtime rewrote it since the undo
    exc = refusal(lambda: redo_operation(tmp_path))
    assert str(exc).startswith(f"cannot redo {done}: .rcs/state/forge-state.json changed since")
    assert "cannot undo" not in str(exc)
    assert kinds.kind_of(exc) == kinds.REFUSED


def test_a_redo_of_an_action_rotated_out_of_the_journal_says_so(tmp_path):
    from rcs_tui.core import error_kinds as kinds
    from rcs_tui.state.redo import pick_redo

    undo = {"id": "u1", "undoes": "gone", "files": []}
    exc = refusal(lambda: pick_redo([undo], None))
    assert exc.args[0] == ("cannot redo gone: that entry is no longer in the journal (rotated away or older than "
                           "the entries read); its undo u1 stays as it is")
    assert kinds.kind_of(exc) == kinds.NOT_FOUND


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `.rcs/state` (path → bytes): what the operator's actions and the runtime wrote."""
    base = root / ".rcs" / "state"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def touched(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, tuple[bytes | None, bytes | None]]:
    """The files one action changed: path → (bytes before, bytes after; None: absent)."""
    return {p: (before.get(p), after.get(p)) for p in sorted(set(before) | set(after))
            if before.get(p) != after.get(p)}


def put(model: dict[str, bytes], files: dict[str, tuple[bytes | None, bytes | None]], side: int) -> None:
    for path, pair in files.items():
        if pair[side] is None:
            model.pop(path, None)
        else:
            model[path] = pair[side]  # type: ignore[assignment]


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.one_of(st.tuples(st.just("clear"), st.sampled_from(MODES)), st.just(("orphan",)),
                                st.just(("doctor",)), st.just(("undo",)), st.just(("redo",))),
                      min_size=1, max_size=14))
@example(steps=[("orphan",), ("doctor",), ("undo",), ("redo",), ("undo",), ("doctor",), ("redo",),
                ("clear", "team"), ("undo",), ("undo",), ("redo",), ("redo",)])
@example(steps=[("orphan",), ("doctor",), ("orphan",), ("undo",), ("redo",)])
def test_doctor_repairs_join_the_same_history_as_clears(steps):
    """A doctor repair is one more action of the history: `undo` takes back the newest action in effect,
    be it a clear or a repair, `redo` puts back the newest one taken back unless a file it rewrites changed
    since its undo, or its undo found a file already as before and so kept no copy of what the action wrote
    (then refused, nothing written). The runtime may write an orphaned member (an active
    mode file with no entry in the active set) at any time. After every step the whole state tree is
    exactly what that history says: each action's files as it left them while in effect, as they were
    before it once undone."""
    from rcs_tui.project.doctor import diagnose, fix

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed(root)
        model = tree(root)
        in_effect: list[dict[str, tuple[bytes | None, bytes | None]]] = []
        taken_back: list[dict[str, tuple[bytes | None, bytes | None]]] = []
        kept: list[bool] = []  # per action taken back: its undo wrote every file (so the journal kept its images)
        for step in steps:
            before = tree(root)
            if step[0] == "clear":
                if f"{step[1]}-state.json" not in before:
                    continue  # nothing to clear
                ops.plan_clear(root, step[1], ops.ROOT_SCOPE).run(root)
                in_effect.append(touched(before, tree(root)))
                put(model, in_effect[-1], 1)
            elif step[0] == "orphan":
                if "ultraqa-state.json" in before:
                    continue
                sf.mode(root, "ultraqa", current_phase="qa")  # the runtime's write: not an action
                model = tree(root)
                assert set(model) - set(before) == {"ultraqa-state.json"}
            elif step[0] == "doctor":
                findings = [f for f in diagnose(root) if f.plan is not None]
                if not findings:
                    continue
                assert [(f.kind, f.subject) for f in findings] == [("orphan", "ultraqa")]
                outcome = fix(root, findings)
                assert [a["held"] for a in outcome["applied"]] == [True] and not outcome["failed"]
                in_effect.append(touched(before, tree(root)))
                assert set(in_effect[-1]) == {"ultraqa-state.json"}
                put(model, in_effect[-1], 1)
            elif step[0] == "undo":
                if not in_effect:
                    continue
                undo_operation(root).run(root)
                taken_back.append(in_effect.pop())
                kept.append(all(before.get(p) != pair[0] for p, pair in taken_back[-1].items()))
                put(model, taken_back[-1], 0)
            else:
                if not taken_back:
                    continue
                files = taken_back[-1]
                if not kept[-1] or any(before.get(p) != pair[0] for p, pair in files.items()):
                    try:
                        redo_operation(root).run(root)
                    except TxnError as exc:
                        assert "nothing was changed" in str(exc)
                        assert ("changed since" if kept[-1] else "was not kept") in str(exc)
                    else:
                        raise AssertionError("redo rewrote a file changed since its undo")
                else:
                    redo_operation(root).run(root)
                    kept.pop()
                    in_effect.append(taken_back.pop())
                    put(model, in_effect[-1], 1)
            assert tree(root) == model, step


def test_a_redo_names_what_it_redoes_and_what_it_restores(tmp_path):
    seed(tmp_path)
    done = ops.plan_clear(tmp_path, "forge", ops.ROOT_SCOPE).run(tmp_path)["journal_id"]
    undo_operation(tmp_path).run(tmp_path)
    op = redo_operation(tmp_path)
    assert op.plan.action == "redo state clear forge"
    assert op.extra == {"redoes": done}
    assert op.plan.summary == {"redoes": done, "restores": op.result["restored"]}  # what --dry-run prints
    assert op.result == {"redone": done, "restored": [".rcs/state/forge-state.json",
                                                      ".rcs/state/skill-active-state.json"]}


def test_a_redo_whose_undo_found_a_file_already_back_is_refused_naming_it(tmp_path):
    """The runtime wrote the orphan's bytes again after a repair removed it: undoing the repair wrote
    nothing there, so the journal keeps no copy of what the repair did to it."""
    from rcs_tui.core import error_kinds as kinds
    from rcs_tui.project.doctor import diagnose, fix

    seed(tmp_path)
    sf.mode(tmp_path, "ultraqa", current_phase="qa")
    repair = fix(tmp_path, [f for f in diagnose(tmp_path) if f.plan is not None])["applied"][0]["journal_id"]
    sf.mode(tmp_path, "ultraqa", current_phase="qa")  # the same bytes again
    undo_operation(tmp_path).run(tmp_path)
    exc = refusal(lambda: redo_operation(tmp_path))
    assert exc.args[0] == (f"cannot redo {repair}: when it was undone, .rcs/state/ultraqa-state.json already held "
                           "what it held before (state clear ultraqa), so what it wrote there was not kept; "
                           "nothing was changed")
    assert kinds.kind_of(exc) == kinds.REFUSED


def test_a_transcript_line_already_gone_when_undone_cannot_be_redone(tmp_path):
    from rcs_tui.state import tasks
    from tests.fixtures_tasks import make_task

    (tmp_path / ".rcs").mkdir()
    make_task(tmp_path, "t1", "planning")
    transcript = tmp_path / ".rcs/tasks/t1/transcript.jsonl"
    before = transcript.read_bytes() if transcript.exists() else None
    done = tasks.apply_plan(tmp_path, tasks.plan_override(tmp_path, "t1", "codegen", "why", actor="me"),
                            actor="me")["journal_id"]
    if before is None:
        transcript.unlink()
    else:
        transcript.write_bytes(before)  # someone cut our line already
    undo_operation(tmp_path).run(tmp_path)
    exc = refusal(lambda: redo_operation(tmp_path))
    assert exc.args[0].startswith(f"cannot redo {done}: when it was undone, .rcs/tasks/t1/transcript.jsonl already")
