"""`rcs-tui task …` run as a subprocess: JSON shapes, dry runs, refusals and the error contract."""

from __future__ import annotations

import json

from fixtures_tasks import FORWARD, make_task, transcript


def test_list_shows_phase_next_moves_and_unreadable_tasks(tmp_path, run_cli):
    make_task(tmp_path, "a1", phase="planning", files=FORWARD["planning"])
    make_task(tmp_path, "b2", phase="test", files={"test/results.json": {"failed": 1}})
    broken = make_task(tmp_path, "c3", phase="review")
    (broken / "state.json").write_text("[1, 2]")
    r = run_cli("task", "list", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    assert r.json == {"tasks": [
        {"id": "a1", "phase": "planning", "justified": ["plan_review"], "error": None},
        {"id": "b2", "phase": "test", "justified": ["codegen"], "error": None},
        {"id": "c3", "phase": None, "justified": [],
         "error": ".rcs/tasks/c3/state.json: expected a JSON object, got list"},
    ]}
    human = run_cli("task", "list", "--root", str(tmp_path))
    assert human.stdout.splitlines()[0] == "a1  planning  next: plan_review"


def test_list_with_no_tasks(tmp_path, run_cli):
    (tmp_path / ".rcs").mkdir()
    r = run_cli("task", "list", "--json", cwd=tmp_path)
    assert r.code == 0 and r.json == {"tasks": []}


def test_show_keeps_extra_fields_and_reports_a_torn_transcript(tmp_path, run_cli):
    tdir = make_task(tmp_path, phase="codegen", files=FORWARD["codegen"])
    (tdir / "transcript.jsonl").write_text('{"kind": "advance", "to": "codegen"}\n{"kind": "ov')
    r = run_cli("task", "show", "t1", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    data = r.json
    assert (data["id"], data["dir"], data["phase"]) == ("t1", ".rcs/tasks/t1", "codegen")
    assert data["extra"] == {"ticket": "RCS-42"}
    assert data["actors"] == {"planning": {"round": 3, "status": "workshop"}}
    assert data["artifacts"]["diff_patch"] is True and data["artifacts"]["code_files"] == 1
    assert data["artifacts"]["json"]["plan.files.json"] == "ok"
    assert data["artifacts"]["json"]["review/code-review.json"] == "missing"
    assert data["transcript"] == {"entries": 1, "tail": [{"kind": "advance", "to": "codegen"}],
                                  "bad_lines": [2], "error": None}
    assert [v["to"] for v in data["next"]["justified"]] == ["review"]


def test_next_explains_why_each_move_is_not_justified(tmp_path, run_cli):
    make_task(tmp_path, phase="plan_review", files={"review/plan-review.json": {"ok": True}})
    r = run_cli("task", "next", "t1", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    assert r.json["justified"] == []
    assert [v["why"] for v in r.json["not_justified"]] == [
        "plan_review → codegen needs review/plan-review.json with ok=true and blocked=false "
        "(ok=true, blocked=missing)",
        "plan_review → planning needs review/plan-review.json signalling needs_changes, blocked, a structural "
        "flaw or a reviewer with ok=false and severity blocking (none found)",
    ]


def test_advance_writes_state_and_transcript(tmp_path, run_cli):
    tdir = make_task(tmp_path, phase="plan_review", files=FORWARD["plan_review"])
    r = run_cli("task", "advance", "t1", "--to", "codegen", "--actor", "bob", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    assert {k: v for k, v in r.json.items() if k != "journal_id"} == {
        "task": "t1", "kind": "advance", "from": "plan_review", "to": "codegen", "changed": True,
        "transcript": ".rcs/tasks/t1/transcript.jsonl"}
    assert json.loads((tdir / "state.json").read_text()) == {
        "phase": "codegen", "actors": {"planning": {"round": 3, "status": "workshop"}}, "ticket": "RCS-42"}
    [line] = transcript(tdir)
    assert (line["actor"], line["from"], line["to"], line["kind"]) == ("bob", "plan_review", "codegen", "advance")
    assert line["reason"] == "review/plan-review.json has ok=true and blocked=false"


def test_advance_skip_is_refused_with_exit_1_and_nothing_written(tmp_path, run_cli, digest_tree):
    make_task(tmp_path, phase="planning", files=FORWARD["planning"])
    before = digest_tree(tmp_path)
    r = run_cli("task", "advance", "t1", "--to", "test", "--root", str(tmp_path), "--json")
    assert r.code == 1 and r.stdout == ""
    assert r.error.startswith("cannot advance t1 from planning to test: not an edge of the task lifecycle")
    assert digest_tree(tmp_path) == before


def test_every_mutating_command_has_a_dry_run_that_touches_nothing(tmp_path, run_cli, digest_tree):
    make_task(tmp_path, phase="review", files=FORWARD["review"])
    before = digest_tree(tmp_path)
    for args in (["advance", "t1", "--to", "test"],
                 ["override", "t1", "--to", "accept", "--reason", "hotfix"],
                 ["redo", "t1", "--reason", "again"]):
        r = run_cli("task", *args, "--dry-run", "--actor", "carol", "--root", str(tmp_path), "--json")
        assert r.code == 0, r.stderr
        plan = r.json
        kind = args[0]
        assert plan["dry_run"] is True and plan["action"] == f"task {kind}" and plan["kind"] == kind
        assert plan["changes"] == [{"path": ".rcs/tasks/t1/state.json", "action": "write",
                                    "why": f"phase review → {plan['to']}"}]
        [append] = plan["appends"]
        line = json.loads(append["line"])
        assert append["path"] == ".rcs/tasks/t1/transcript.jsonl"
        assert (line["actor"], line["from"], line["to"], line["kind"]) == ("carol", "review", plan["to"], kind)
    assert digest_tree(tmp_path) == before


def test_override_rules_through_the_cli(tmp_path, run_cli, digest_tree):
    tdir = make_task(tmp_path, phase="review")
    before = digest_tree(tmp_path)
    r = run_cli("task", "override", "t1", "--to", "accept", "--root", str(tmp_path))
    assert r.code == 1 and r.error.startswith("override needs a non-empty --reason")
    r = run_cli("task", "override", "t1", "--to", "accept", "--reason", " ", "--root", str(tmp_path))
    assert r.code == 1 and r.error.startswith("override needs a non-empty --reason")
    assert digest_tree(tmp_path) == before

    r = run_cli("task", "override", "t1", "--to", "accept", "--reason", "I accept the risk of skipping review",
                "--actor", "dave", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    assert r.json["kind"] == "override" and r.json["to"] == "accept"
    [line] = transcript(tdir)
    assert {k: line[k] for k in ("actor", "from", "to", "reason", "kind")} == {
        "actor": "dave", "from": "review", "to": "accept",
        "reason": "I accept the risk of skipping review", "kind": "override"}
    journal = [json.loads(x) for x in (tmp_path / ".rcs/logs/rcs-tui-journal.jsonl").read_text().splitlines()]
    assert journal[-1]["id"] == r.json["journal_id"] and journal[-1]["state"] == "done"


def test_override_from_done_is_refused_listing_reachable_phases(tmp_path, run_cli):
    make_task(tmp_path, phase="done")
    r = run_cli("task", "override", "t1", "--to", "codegen", "--reason", "x", "--root", str(tmp_path))
    assert r.code == 1
    assert r.error == ("cannot override t1 from done to codegen: codegen is not reachable from done in the task "
                       "lifecycle. Reachable phases: none: done is terminal; reopen it with "
                       "`rcs-tui task redo t1 --reason R`")


def test_redo_reopens_a_done_task(tmp_path, run_cli):
    tdir = make_task(tmp_path, phase="done")
    r = run_cli("task", "redo", "t1", "--reason", "regression found", "--root", str(tmp_path), "--json")
    assert r.code == 0, r.stderr
    assert (r.json["from"], r.json["to"], r.json["kind"]) == ("done", "planning", "redo")
    assert json.loads((tdir / "state.json").read_text())["phase"] == "planning"


def test_bad_input_gives_json_errors_never_tracebacks(tmp_path, run_cli):
    tdir = make_task(tmp_path, phase="review")
    for task_id in ("../t1", "a/b", ".."):
        r = run_cli("task", "show", task_id, "--root", str(tmp_path))
        assert r.code == 1 and r.error.startswith(f"invalid task id {task_id!r}")
    (tdir / "state.json").write_text('{"phase": "shipping"}')
    r = run_cli("task", "next", "t1", "--root", str(tmp_path), "--json")
    assert r.code == 1 and r.error.startswith(
        ".rcs/tasks/t1/state.json: field \"phase\": unknown phase 'shipping'; valid phases: planning")
    (tdir / "state.json").write_text('{"phase": ')
    r = run_cli("task", "advance", "t1", "--to", "test", "--root", str(tmp_path))
    assert r.code == 1 and r.error.startswith(".rcs/tasks/t1/state.json: invalid JSON")
    r = run_cli("task", "advance", "t1", "--to", "test", "--root", str(tmp_path / "nowhere"))
    assert r.code == 1 and "not a directory" in r.error


def test_override_dry_run_names_the_phases_it_moves_between(tmp_path, run_cli, digest_tree):
    """A dry run says from which phase to which the task would move, in text and in JSON."""
    make_task(tmp_path, phase="review")
    before = digest_tree(tmp_path)
    args = ("task", "override", "t1", "--to", "accept", "--reason", "hotfix", "--dry-run", "--root", str(tmp_path))
    r = run_cli(*args)
    assert r.code == 0, r.stderr
    assert r.stdout.splitlines() == [
        "dry run: t1: review → accept (override)",
        "  would write .rcs/tasks/t1/state.json, append to .rcs/tasks/t1/transcript.jsonl",
        "  nothing changed"]
    j = run_cli(*args, "--json")
    assert (j.json["dry_run"], j.json["from"], j.json["to"], j.json["changed"]) == (True, "review", "accept", True)
    same = run_cli("task", "override", "t1", "--to", "review", "--reason", "x", "--dry-run", "--root", str(tmp_path))
    assert same.stdout == "dry run: t1: unchanged (task is already in review); nothing to write\n"
    assert digest_tree(tmp_path) == before
