"""Operator actions racing a runtime that rewrites the same files at hundreds of writes per second.

A separate process (runtime_writer.py) rewrites mode files, both canonical sets and a task's state.json
with atomic renames, in-place truncating writes, deletes and renames, logging every write with the
sha256 it left behind. Meanwhile this process clears modes (ops.plan_clear(...).run), overrides tasks
(rcs_tui.state.tasks) and re-reads the snapshot, optionally with the HUD app running under run_test.

What is checked, and why it is the right check:
- Nothing raises except the refusals the operator is meant to see (ChangedUnderneath / TxnError);
  snapshot reads never raise at all.
- Applied to the state it previewed: for each applied action, the journal's before-image of every
  file (the bytes read under the lock at the check) has exactly the digest the plan was built on.
- No runtime write lost, from the writer's own log: the runtime never takes rcs-tui's lock, so a write
  is lost only if rcs-tui's bytes replace it without rcs-tui having seen it. For each path we take the
  writer's LAST operation on it (its `t0`, monotonic, taken before it started). The file's final bytes
  must be either what that operation left, or the bytes of an operator action that finished after
  that `t0` (it may legitimately have landed last). Final bytes from an action that finished before
  the runtime's last write began mean rcs-tui overwrote the runtime late (a lost write); bytes from
  neither side mean a torn or foreign write. Both fail the test.
The residual window (a runtime write landing between rcs-tui's read-compare and its rename, a few
microseconds since the new bytes are staged and fsynced before the check) cannot be closed against a
writer that ignores the lock; it shows up as an allowed "operator landed last" case, never as corruption.
"""

from __future__ import annotations

import asyncio
import base64
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rcs_tui.files.io import digest, file_digest
from rcs_tui.state import ops, tasks
from rcs_tui.state.journal import read_journal
from rcs_tui.state.reader import read_snapshot
from rcs_tui.state.txn import ChangedUnderneath, Plan, TxnError
from tests.reliability.conftest import MODES, SESSION, start_writer, writer_paths

RATE = 300  # writes per second asked of the stand-in runtime


@dataclass
class Outcomes:
    applied: list[tuple[str, Plan, int]] = field(default_factory=list)  # journal id, plan, done (monotonic ns)
    refused: dict[str, int] = field(default_factory=dict)
    reads: int = 0


def operator_loop(root: Path, until: float, seed: int) -> Outcomes:
    """Clears, overrides and snapshot reads until `until` (monotonic seconds)."""
    rng = random.Random(seed)
    out = Outcomes()
    while time.monotonic() < until:
        roll = rng.random()
        try:
            if roll < 0.55:
                scope = rng.choice([ops.ROOT_SCOPE, SESSION])
                op = ops.plan_clear(root, rng.choice(MODES), session_id=scope)
                plan = op.plan
                if not plan.changes:
                    continue
                jid = op.run(root, actor="reliability")["journal_id"]
            elif roll < 0.85:
                plan = tasks.plan_override(root, rng.choice(["t1", "t2"]),
                                           rng.choice(["plan_review", "codegen", "review", "test"]),
                                           "reliability run", actor="reliability")
                if not plan.changes:
                    continue
                jid = tasks.apply_plan(root, plan, actor="reliability")["journal_id"]
            else:
                read_snapshot(root, SESSION, all_sessions=True)
                out.reads += 1
                continue
            out.applied.append((jid, plan, time.monotonic_ns()))
        except ChangedUnderneath:
            out.refused["changed underneath"] = out.refused.get("changed underneath", 0) + 1
        except TxnError as exc:  # unparsable file mid-write, task phase not reachable, policy ...
            key = type(exc).__name__
            out.refused[key] = out.refused.get(key, 0) + 1
    return out


def check_previewed(root: Path, out: Outcomes) -> None:
    journal = {e["id"]: e for e in read_journal(root, limit=10**9)}  # every entry, however long the run
    for jid, plan, _done in out.applied:
        entry = journal[jid]
        expects = {str(c.path.relative_to(root)): c.expect for c in plan.changes}
        for item in entry["files"]:
            before = item["before_b64"]
            seen = digest(base64.b64decode(before)) if before is not None else None
            assert seen == expects[item["path"]], f"{jid} applied to {item['path']} in a state it never previewed"


def check_no_lost_write(root: Path, log: list[dict], out: Outcomes) -> dict[str, str]:
    """Per path: final bytes are the runtime's last write, or an operator action that ended after it began."""
    journal = {e["id"]: e for e in read_journal(root, limit=10**9)}  # every entry, however long the run
    last: dict[str, dict] = {}
    for rec in log:
        last[rec["path"]] = rec
    operator: dict[str, list[tuple[str | None, int]]] = {}
    for jid, _plan, done in out.applied:
        for item in journal[jid]["files"]:
            operator.setdefault(item["path"], []).append((item["after_sha"], done))
    verdicts = {}
    for rel in set(last) | set(operator):
        actual = file_digest(root / rel)
        runtime = last.get(rel)
        if runtime is not None and actual == runtime["sha"]:
            verdicts[rel] = "runtime last"
            continue
        since = runtime["t0"] if runtime else 0
        landed = [done for sha, done in operator.get(rel, []) if sha == actual and done > since]
        assert landed, (f"{rel}: final content {actual} is neither the runtime's last write "
                        f"({runtime and runtime['op']} {runtime and runtime['sha']}) nor an operator action "
                        "that finished after it began: a runtime write was lost")
        verdicts[rel] = "operator last"
    return verdicts


def leftover_temps(root: Path) -> list[Path]:
    """rcs-tui's own temp files (`.<name>.<random>.tmp`); the runtime's are `.rt-<n>.tmp`."""
    return [p for p in (root / ".rcs").rglob(".*.tmp") if not p.name.startswith(".rt-")]


def run_race(root: Path, seconds: float, seed: int) -> tuple[list[dict], Outcomes]:
    writer = start_writer(root, seconds, RATE, seed=seed)
    out = operator_loop(root, time.monotonic() + seconds, seed)
    return writer.wait(timeout=seconds + 30), out


def assert_race_ok(root: Path, log: list[dict], out: Outcomes, seconds: float) -> None:
    writes = len(log)
    assert writes / seconds >= 100, f"the runtime stand-in managed only {writes / seconds:.0f} writes/s"
    assert out.applied, f"no operator action applied at all ({out.refused})"
    assert out.refused.get("changed underneath"), "the race never made the digest check refuse anything"
    check_previewed(root, out)
    check_no_lost_write(root, log, out)
    assert not leftover_temps(root)
    assert {p for p in writer_paths()} >= {r["path"] for r in log}


def test_operator_actions_race_the_runtime(busy_tree):
    log, out = run_race(busy_tree, 4.0, seed=11)
    assert_race_ok(busy_tree, log, out, 4.0)


@pytest.mark.slow
def test_operator_actions_race_the_runtime_long(busy_tree):
    log, out = run_race(busy_tree, 60.0, seed=12)
    assert_race_ok(busy_tree, log, out, 60.0)


async def test_race_with_the_hud_running(busy_tree):
    """Same race while the HUD app watches the tree; it must survive and end up showing the final state."""
    hud_app = pytest.importorskip("rcs_tui.ui.hud_app")
    from rcs_tui.project.loader import WorldLoader

    seconds = 4.0
    app = hud_app.HudApp(busy_tree, session_id=SESSION, rp1_db=False)
    async with app.run_test(size=(100, 30)) as pilot:
        writer = start_writer(busy_tree, seconds, RATE, seed=21)
        out = await asyncio.to_thread(operator_loop, busy_tree, time.monotonic() + seconds, 21)
        log = await asyncio.to_thread(writer.wait, seconds + 30)
        updates_during = app.updates
        fresh = WorldLoader(busy_tree, session_id=SESSION, rp1_db=False).load()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            await pilot.pause(0.1)
            if app.world is not None and app.world.snapshot.active_set() == fresh.snapshot.active_set():
                break
        assert app.is_running
        assert app.world.snapshot.active_set() == fresh.snapshot.active_set(), "HUD did not settle on the final state"
    assert updates_during > 5, "the HUD never repainted while the runtime was writing"
    assert_race_ok(busy_tree, log, out, seconds)
