"""Hostile state trees: damaged JSON (a lone surrogate escape among it), symlinks, bad ids (on the
read-only commands too), and markup/escape sequences in every string.

The reader and every CLI command must answer (exit 0/1/2 with `{"error"}`), never traceback, never hang;
strings from state files must reach the terminal as inert text: no escape byte of the file's own, no
Rich markup interpreted, in `hud --once`, `overlay`, `snapshot --json` and the HUD app's screen.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcs_tui.files.io import read_json
from rcs_tui.state.reader import read_snapshot
from tests import statefix as sf
from tests.conftest import tree_digest
from tests.fixtures_tasks import make_task
from tests.reliability.conftest import SESSION, build_busy_tree

HOSTILE = [
    "[bold red]BOOM[/bold red]",
    "[link=https://evil.example/x]click[/link]",
    "\x1b[31mRED\x1b[0m",
    "\x1b[2J\x1b[H\x1b[10;10Hmoved",
    "\x1b]8;;https://evil.example\x07osc8\x1b]8;;\x07",
    "\x1b]52;c;ZXZpbA==\x07clip",
    "\x9b31mC1\x9d0;title\x9c",
    "bell\x07\x08\x7fdel",
]
PAYLOAD = "".join(HOSTILE)
# What rcs-tui itself emits in colour: SGR sequences only.
OWN_SGR = re.compile(r"\x1b\[[0-9;]*m")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

DAMAGED: dict[str, bytes] = {
    "truncated": b'{"active": true, "current_phase": "exec',
    "empty": b"",
    "whitespace": b"  \n\t ",
    "binary": bytes(range(256)) * 4,
    "nul": b'{"active": true}\x00',
    "not-utf8": b'{"active": true, "task_description": "\xff\xfe\xc3"}',
    "deep-array": b"[" * 200_000 + b"]" * 200_000,
    "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "top-level-array": b'[{"active": true}]',
    "top-level-string": b'"active"',
    "wrong-types": json.dumps({"active": "yes", "iteration": "three", "max_iterations": [], "current_phase": 7,
                               "active_skills": "forge", "skill": {"x": 1}, "session_id": 5,
                               "started_at": -1e308, "updated_at": {"$date": 1}}).encode(),
    "bad-entries": json.dumps({"version": 1, "active": True, "active_skills": [
        1, None, "forge", {"skill": 5}, {"skill": "../x", "active": True}, {"skill": "a" * 65, "active": True},
        {"skill": "forge", "active": "true"}, {"skill": "forge", "active": True, "session_id": ["s"]}]}).encode(),
    "huge-number": b'{"active": true, "iteration": 1' + b"0" * 5000 + b"}",
    "nan": b'{"active": true, "iteration": NaN, "max_iterations": Infinity}',
    "9MB": b'{"active": true, "pad": "' + b"x" * (9 * 1024 * 1024) + b'"}',
}
TARGETS = [".rcs/state/forge-state.json", f".rcs/state/sessions/{SESSION}/team-state.json",
           ".rcs/state/skill-active-state.json", f".rcs/state/sessions/{SESSION}/skill-active-state.json",
           ".rcs/state/session.json", f".rcs/state/sessions/{SESSION}/hud-state.json", ".rcs/metrics.json",
           ".rcs/hud-config.json", ".rcs/tasks/t1/state.json"]
COMMANDS = [["snapshot", "--json"], ["hud", "--once"], ["hud", "--once", "--json"], ["overlay"],
            ["overlay", "--json"], ["state", "get-status", "--json"], ["state", "list-active", "--json"],
            ["task", "list", "--json"], ["doctor", "--json"]]


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return build_busy_tree(root)


def run_all(run_cli, root: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    out = {}
    for args in COMMANDS:
        res = run_cli(*args, "--root", str(root), env=env, timeout=60)
        findings_remain = args[0] == "doctor" and res.code == 3  # the doctor's documented status
        assert res.code in (0, 1, 2) or findings_remain, (args, res.code, res.stderr)
        if res.code and not findings_remain:
            assert json.loads(res.stderr.strip().splitlines()[-1])["error"]
        out[" ".join(args)] = res.stdout
    return out


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_damaged_files_everywhere(tmp_path, run_cli, case):
    """Each damaged content in every file rcs-tui reads: reader and all commands answer, none tracebacks."""
    root = tree(tmp_path)
    for rel in TARGETS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(DAMAGED[case])
    snap = read_snapshot(root, SESSION)
    assert snap is not None
    run_all(run_cli, root)


@pytest.mark.slow
def test_100mb_state_file(tmp_path, run_cli):
    root = tree(tmp_path)
    with open(root / ".rcs/state/forge-state.json", "wb") as fh:
        fh.write(b'{"active": true, "pad": "')
        fh.write(b"x" * (100 * 1024 * 1024))
        fh.write(b'"}')
    read_snapshot(root, SESSION)
    outputs = run_all(run_cli, root)
    assert "too large" in outputs["snapshot --json"]


def test_symlinks_out_of_tree_and_loops(tmp_path, run_cli):
    root = tree(tmp_path)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"active": True, "task_description": "SECRET-OUTSIDE"}))
    state = root / ".rcs/state"
    (state / "forge-state.json").unlink()
    os.symlink(secret, state / "forge-state.json")
    os.symlink(state / "loop-b-state.json", state / "loop-a-state.json")
    os.symlink(state / "loop-a-state.json", state / "loop-b-state.json")
    os.symlink("/", state / "sessions" / "escape")
    os.symlink(tmp_path, root / ".rcs/tasks/outside")
    os.symlink(root / ".rcs/tasks/t2", root / ".rcs/tasks/t3")
    self_loop = state / "sessions" / SESSION / "autopilot-state.json"
    os.symlink(self_loop, self_loop)
    outputs = run_all(run_cli, root)
    for text in outputs.values():
        assert "SECRET-OUTSIDE" not in text
    assert secret.read_text().startswith("{")


@pytest.mark.parametrize("bad", ["..", "../x", "", "a" * 65, "x y\x1b[31m"])
def test_invalid_ids_are_refused_and_touch_nothing(tmp_path, run_cli, digest_tree, bad):
    root = tree(tmp_path)
    before = digest_tree(root)
    calls = [["state", "clear", "--mode", bad, "--json"], ["state", "clear", "--mode", "forge", "--session-id", bad],
             ["state", "write", "--mode", bad, "--input", '{"active": false}'],
             ["state", "read", "--mode", "forge", "--session-id", bad], ["snapshot", "--session-id", bad, "--json"],
             ["hud", "--once", "--session", bad], ["overlay", "--session", bad],
             ["task", "override", bad, "--to", "review", "--reason", "r"], ["task", "show", bad], ["undo", bad]]
    for args in calls:
        res = run_cli(*args, "--root", str(root))
        assert res.code in (1, 2), (args, res.stdout)
    assert digest_tree(root) == before


def test_invalid_names_on_disk_are_not_followed(tmp_path, run_cli):
    """Session dirs and a session pointer whose names are not valid ids are reported and ignored, never read.

    Only root `team` is valid; the invalid session dirs hold an active `forge`, and session.json (live pid)
    points at one of them. Following either would make forge part of what the commands print.
    """
    root = tmp_path / "proj"
    sf.mode(root, "team", current_phase="team-exec")
    sf.canonical(root, ["team"])
    for bad in ("bad session", "..bad"):
        sf.mode(root, "forge", bad, current_phase="executing")
        sf.canonical(root, ["forge"], bad)
    sf.pointer(root, "..bad")
    sf.write(root / ".rcs/state/x y-state.json", {"active": True})
    snap = run_cli("snapshot", "--json", "--root", str(root)).json
    assert snap["session"]["session_id"] is None and "invalid session_id" in snap["session"]["pointer"]["reason"]
    assert [s["scope"] for s in snap["scopes"]] == ["root"]
    assert snap["active_set"] == ["team"]
    assert {(e["path"], e["error"]) for e in snap["errors"]} >= {
        (".rcs/state/sessions/bad session", "invalid session directory name; ignored"),
        (".rcs/state/sessions/..bad", "invalid session directory name; ignored")}
    assert run_cli("state", "list-active", "--json", "--root", str(root)).json["active_modes"] == ["team"]
    overlay = run_cli("overlay", "--root", str(root)).stdout
    assert "- team:" in overlay and "forge" not in overlay
    hud = run_cli("hud", "--once", "--json", "--root", str(root)).stdout
    assert "team" in hud and "forge" not in hud


def hostile_tree(tmp_path: Path) -> Path:
    """Markup and escape sequences in every string field rcs-tui shows."""
    root = tree(tmp_path)
    p = PAYLOAD
    for sid in (None, SESSION):
        for m in ("forge", "team", "ultrawork", "autopilot", "blueprint", "deep-interview", "ultraqa"):
            sf.mode(root, m, sid, current_phase=p, iteration=3, max_iterations=10, task_description=p,
                    error=p, transition_message=p, team_name="login-flow", run_outcome=p, started_at=p,
                    updated_at=p, thread_id=p, turn_id=p, input_lock={"active": True, "message": p})
        doc = json.loads((root / (".rcs/state" + (f"/sessions/{sid}" if sid else "") +
                                  "/skill-active-state.json")).read_text())
        doc.update(phase=p, keyword=p, source=p, transition_message=p)
        for e in doc["active_skills"]:
            e.update(phase=p, activated_at=p, thread_id=p)
        sf.write(root / ".rcs/state" / (f"sessions/{sid}" if sid else "") / "skill-active-state.json", doc)
    sf.write(root / f".rcs/state/sessions/{SESSION}/hud-state.json",
             {"last_turn_at": p, "turn_count": 3, "last_agent_output": p})
    sf.write(root / ".rcs/metrics.json", {"session_turns": 3, "session_total_tokens": 1000, "last_activity": p,
                                          "five_hour_limit_pct": p})
    team = root / ".rcs/state/team/login-flow"
    sf.write(team / "config.json", {"name": p, "task": p, "worker_count": 1, "workers": [{"name": p}]})
    sf.write(team / "phase.json", {"current_phase": p, "transitions": [{"from": p, "to": p, "at": p}]})
    sf.write(team / "tasks/task-1.json", {"id": "1", "subject": p, "description": p, "status": "in_progress",
                                          "owner": p})
    sf.write(team / "workers/w1/status.json", {"state": "working", "reason": p, "current_task_id": p})
    make_task(root, "t1", "codegen", state={"phase": "codegen", "actors": {"codegen": {"status": p}}, "note": p})
    return root


def assert_inert(text: str, where: str, color: bool) -> None:
    rest = OWN_SGR.sub("", text) if color else text
    assert "\x1b" not in rest, f"{where}: an escape sequence from the state files reached the output"
    assert not CONTROL.search(rest.replace("\n", "").replace("\t", "")), f"{where}: control characters leaked"


def test_markup_and_escapes_are_inert_in_cli_output(tmp_path, run_cli):
    root = hostile_tree(tmp_path)
    for env in ({"COLUMNS": "400"}, {"COLUMNS": "400", "NO_COLOR": "1"}):
        outputs = run_all(run_cli, root, env=env)
        for name, text in outputs.items():
            assert_inert(text, name, color=name == "hud --once" and "NO_COLOR" not in env)
    assert "forge" in outputs["hud --once"]
    assert "[bold red]" in outputs["overlay"] or "bold red" in outputs["overlay"], outputs["overlay"]


async def test_markup_and_escapes_are_inert_in_the_hud_app(tmp_path):
    hud_app = pytest.importorskip("rcs_tui.ui.hud_app")
    root = hostile_tree(tmp_path)
    app = hud_app.HudApp(root, session_id=SESSION, rp1_db=False, watch=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        svg = app.export_screenshot()
    assert "\x1b" not in svg and "\x07" not in svg and "\x9b" not in svg
    assert "evil.example" not in svg.split("<style")[0] or "href" not in svg, "a [link=...] became a real link"
    assert "forge" in svg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(
    st.binary(max_size=400),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                 lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=5),
                 max_leaves=25).map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(["active", "current_phase", "iteration", "max_iterations", "active_skills",
                                     "skill", "session_id", "task_description", "started_at", "phase"]),
                    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.lists(
                        st.dictionaries(st.sampled_from(["skill", "active", "session_id", "phase"]),
                                        st.none() | st.booleans() | st.text(max_size=10), max_size=4), max_size=4),
                    max_size=8).map(lambda d: json.dumps(d).encode())))
def test_reader_and_views_never_raise(tmp_path_factory, content):
    """Any bytes in a mode file and a canonical set: snapshot, HUD line and overlay render, inert."""
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.state.plans import plan_names
    from rcs_tui.views.hud_line import render_spans, to_ansi
    from rcs_tui.views.overlay import build_overlay
    from rcs_tui.views.snapshot_json import snapshot_json

    root = tree(tmp_path_factory.mktemp("h"))
    for rel in (".rcs/state/forge-state.json", f".rcs/state/sessions/{SESSION}/skill-active-state.json"):
        (root / rel).write_bytes(content)
    snap = read_snapshot(root, SESSION)
    json.dumps(snapshot_json(snap))
    assert_inert(build_overlay(snap, plan_names(snap.root)).text, "overlay", color=False)
    world = WorldLoader(root, session_id=SESSION, rp1_db=False).load()
    for line in render_spans(world, 0.0, 120, 3, "full"):
        assert_inert(to_ansi(line, False), "hud line", color=False)


# -- text no UTF-8 file can hold, and session ids that are not ids, on the read-only commands ------------------
def test_a_lone_surrogate_escape_in_a_state_file_is_refused_where_it_is_read(project, run_cli):
    """`"\\ud800"` is valid JSON syntax but no text a UTF-8 file can hold: it used to be planned on and then
    fail inside the JSON writer as `internal error: ValueError`."""
    path = project / ".rcs/state/forge-state.json"
    path.write_text('{"active": true, "current_phase": "\\ud800"}')
    before = tree_digest(project)
    why = "holds text that is not valid Unicode (a lone surrogate escape \\ud800); not usable as state"
    assert read_json(path).error == why
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"iteration": 2}', "--dry-run", "--json",
                  "--root", str(project))
    assert res.code == 1
    assert res.error == f".rcs/state/forge-state.json: {why}; fix or clear it first (nothing was changed)"
    snap = run_cli("snapshot", "--json", "--root", str(project)).json
    assert {"path": ".rcs/state/forge-state.json", "error": why} in snap["errors"]
    assert tree_digest(project) == before
    res = run_cli("state", "clear", "--mode", "forge", "--json", "--root", str(project))  # the way out still works
    assert res.code == 0 and res.json["cleared"] is True and not path.exists()


def test_a_proper_surrogate_pair_escape_is_ordinary_text(project):
    path = project / ".rcs/state/forge-state.json"
    path.write_text('{"active": true, "current_phase": "\\ud83d\\ude00"}')
    assert read_json(path).ok and read_json(path).data["current_phase"] == "\U0001f600"


@pytest.mark.parametrize("bad", ["a\nb", "\x1b[31mred", "../x", "x" * 65])
def test_an_invalid_session_id_on_read_only_commands_is_a_usage_error_not_an_internal_one(project, run_cli, bad):
    """snapshot/hud --once used to end in `internal error: AttributeError` on such an id."""
    for args in (["snapshot", "--session-id", bad, "--json"], ["hud", "--once", "--session", bad],
                 ["overlay", "--session", bad, "--json"]):
        res = run_cli(*args, "--root", str(project))
        assert res.code == 1, (args, res.stdout)
        assert res.error.startswith("invalid session id ") and res.error.endswith(
            "must match ^[A-Za-z0-9_-]{1,64}$"), (args, res.error)
        assert "\x1b" not in res.stderr and "\n" not in res.stderr.strip()

