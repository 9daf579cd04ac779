"""The HUD line and stack: health words, forge colours, priorities, widths, presets, untrusted text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rcs_tui.demo import build_workspace
from rcs_tui.project.loader import WorldLoader
from rcs_tui.views.hud_line import build_segments, plain, render_spans, to_ansi

FIXED = datetime(2026, 11, 25, 21, 45, tzinfo=UTC)
EPOCH = FIXED.timestamp()
SID = "sess-1"


def freeze(base: Path, epoch: float = EPOCH) -> None:
    """Give every file the same mtime so data age is a function of the injected clock only."""
    for p in base.rglob("*"):
        if p.is_file():
            os.utime(p, (epoch, epoch))


def write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def tree(tmp_path: Path, modes: dict[str, dict], canonical: list[str] | None, *, root_modes: dict | None = None,
         metrics: dict | None = None, config: dict | None = None) -> Path:
    """A project with one session (selected via explicit id in the loader) holding `modes`."""
    state = tmp_path / ".rcs" / "state"
    sess = state / "sessions" / SID
    for mode, data in modes.items():
        write(sess / f"{mode}-state.json", data)
    if canonical is not None:
        write(sess / "skill-active-state.json", {"version": 1, "active": bool(canonical), "active_skills": [
            {"skill": m, "active": True, "session_id": SID} for m in canonical]})
    for mode, data in (root_modes or {}).items():
        write(state / f"{mode}-state.json", data)
    if metrics is not None:
        write(tmp_path / ".rcs" / "metrics.json", metrics)
    if config is not None:
        write(tmp_path / ".rcs" / "hud-config.json", config)
    freeze(tmp_path)
    return tmp_path


def world(root: Path, **kw):
    return WorldLoader(root, session_id=SID, rp1_db=False, clock=lambda: EPOCH + 3, **kw).load()


def line(root: Path, width: int = 200, preset: str = "focused", **kw) -> str:
    return plain(render_spans(world(root), EPOCH + 3, width, 1, preset, **kw)[0])


def forge(i, top=10, **extra):
    return {"active": True, "current_phase": "executing", "iteration": i, "max_iterations": top, **extra}


@pytest.mark.parametrize("i,style", [(6, "green"), (7, "yellow"), (8, "yellow"), (9, "red"), (10, "red")])
def test_forge_turns_yellow_at_70_and_red_at_90_percent(tmp_path, i, style):
    root = tree(tmp_path, {"forge": forge(i)}, ["forge"])
    segs = build_segments(world(root), EPOCH + 3)
    spans = dict((t, s) for t, s in segs[0].spans)
    assert spans[f"forge:{i}/10"] == style


def test_every_health_state_reads_without_colour(tmp_path):
    root = tree(tmp_path, {"forge": forge(3), "team": {"active": True, "current_phase": "team-exec"},
                           "blueprint": {"active": False, "current_phase": "complete"}},
                ["forge", "blueprint"], root_modes={"ultrawork": {"active": True}})
    text = line(root)
    assert "● forge:3/10" in text
    assert "◌ blueprint:complete stale" in text
    assert "◍ team:team-exec orphan" in text
    assert "▲ ultrawork root-survivor" in text
    ascii_text = line(root, ascii_only=True)
    assert "* forge:3/10" in ascii_text and "o blueprint" in ascii_text and "^ ultrawork root-survivor" in ascii_text


def test_a_member_that_ended_on_a_question_says_it_waits_for_you_though_stale(tmp_path):
    """Inactive but still listed, it is stale as the runtime judges it; it ended on a question, so the line
    says it waits for you (as the fleet and the console do), not only that it is stale."""
    root = tree(tmp_path, {"forge": forge(3, active=False, current_phase="blocked_on_user",
                                         lifecycle_outcome="askuserQuestion"),
                           "blueprint": {"active": False, "current_phase": "complete"}}, ["forge", "blueprint"])
    text = line(root)
    assert "◌ forge:3/10 stale · waits for you" in text
    assert "◌ blueprint:complete stale" in text and "blueprint:complete stale ·" not in text


def test_member_details_blueprint_interview_team(tmp_path):
    root = tree(tmp_path, {"blueprint": {"active": True, "current_phase": "draft", "iteration": 2},
                           "deep-interview": {"active": True, "current_phase": "intent-first",
                                              "input_lock_active": True},
                           "team": {"active": True, "current_phase": "team-exec", "team_name": "login-flow"}},
                ["blueprint", "deep-interview", "team"])
    team = tmp_path / ".rcs" / "state" / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "worker_count": 3})
    for n, status in enumerate(["completed", "completed", "in_progress", "pending"], 1):
        write(team / "tasks" / f"task-{n}.json", {"id": str(n), "status": status, "subject": "s"})
    text = line(root)
    assert "blueprint:2/?" in text
    assert "interview:intent-first:lock" in text
    assert "team:login-flow (3 workers, 2/4 done)" in text


def test_worker_whose_pid_is_gone_shows_dead_not_working(tmp_path):
    root = tree(tmp_path, {"team": {"active": True, "current_phase": "team-exec", "team_name": "login-flow"}},
                ["team"])
    team = tmp_path / ".rcs" / "state" / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "worker_count": 2})
    for name, pid in (("worker-1", os.getpid()), ("worker-2", 4_194_303)):
        write(team / "workers" / name / "status.json", {"state": "working", "current_task_id": "2"})
        write(team / "workers" / name / "heartbeat.json", {"pid": pid, "alive": True})
    rows = [plain(r) for r in render_spans(world(root), EPOCH + 3, 60, 30)]
    assert "    · worker-1 working task 2" in rows
    assert "    · worker-2 dead task 2" in rows


def test_nothing_active(tmp_path):
    root = tree(tmp_path, {}, [])
    assert line(root).startswith("[RCS] No active modes.")


def test_outcomes_of_modes_that_just_ended_and_never_cancelled(tmp_path):
    recent = "2026-11-25T21:40:00.000Z"
    root = tree(tmp_path, {"forge": forge(3),
                           "autopilot": {"active": False, "current_phase": "failed", "completed_at": recent},
                           "ultraqa": {"active": False, "run_outcome": "cancelled", "completed_at": recent},
                           "blueprint": {"active": False, "lifecycle_outcome": "finished",
                                         "completed_at": "2026-11-25T19:00:00.000Z"}}, ["forge"])
    text = line(root)
    assert "autopilot→failed" in text
    assert "cancelled" not in text and "qa→stopped (admin)" in text
    assert "blueprint→" not in text  # ended hours ago: no longer "just ended"


def test_metrics_presets_and_config(tmp_path):
    metrics = {"session_turns": 14, "total_turns": 200, "session_total_tokens": 853_600,
               "five_hour_limit_pct": 38, "weekly_limit_pct": 12, "last_activity": "2026-11-25T21:44:00Z"}
    root = tree(tmp_path, {"forge": forge(3)}, ["forge"], metrics=metrics)
    focused = line(root)
    assert "turns:14 | tokens:853.6k | quota:5h:38%,wk:12%" in focused
    assert "updated 3s ago" in focused and "total-turns" not in focused
    assert "tokens" not in line(root, preset="minimal") and "turns:14" in line(root, preset="minimal")
    assert "total-turns:200" in line(root, preset="full")
    write(tmp_path / ".rcs" / "hud-config.json", {"preset": "minimal"})
    assert world(root).config.preset == "minimal"


def test_data_age_turns_stale(tmp_path):
    root = tree(tmp_path, {"forge": forge(3)}, ["forge"])
    w = world(root)
    assert "stale 2m" in plain(render_spans(w, EPOCH + 150, 200)[0])


@pytest.mark.parametrize("width", [10, 20, 33, 47, 60, 80, 101, 160])
def test_narrow_widths_drop_lowest_first_and_never_overflow(tmp_path, width):
    ws = build_workspace(tmp_path, now=FIXED)
    freeze(tmp_path)
    w = WorldLoader(ws.project, rp1_db=ws.rp1_db, clock=lambda: EPOCH + 3).load()
    spans = render_spans(w, EPOCH + 3, width)[0]
    text = plain(spans)
    assert len(text) <= width
    full = plain(render_spans(w, EPOCH + 3, 1000)[0])
    assert "updated 3s ago" in full and "turns:14" in full
    if "turns:" in text:
        assert "forge" in text  # members come before metrics
    if "updated" in text:
        assert "turns:14" in text  # the age goes first
    ansi = to_ansi(spans)
    assert re.sub(r"\x1b\[[0-9;]*m", "", ansi) == text  # every escape is whole, none cut
    assert "\x1b" not in re.sub(r"\x1b\[[0-9;]*m", "", ansi)


def test_member_details_go_before_members(tmp_path):
    ws = build_workspace(tmp_path, now=FIXED)
    freeze(tmp_path)
    w = WorldLoader(ws.project, rp1_db=ws.rp1_db, clock=lambda: EPOCH + 3).load()
    text = plain(render_spans(w, EPOCH + 3, 80)[0])
    assert text.startswith("[RCS] ● forge:3/10 | ● team")
    assert "▲ ultrawork root-survivor" in text and "turns" not in text


def test_untrusted_strings_cannot_inject_escapes(tmp_path):
    evil = "\x1b]52;c;cHduZWQ=\x07\x1b[31mred[bold]x\ny"
    root = tree(tmp_path, {"team": {"active": True, "current_phase": evil, "team_name": evil}}, ["team"])
    spans = render_spans(world(root), EPOCH + 3, 200)[0]
    ansi = to_ansi(spans)
    assert "\x1b]" not in ansi and "\n" not in plain(spans)
    assert "red[bold]x y" in plain(spans)


def test_bad_files_become_an_error_badge(tmp_path):
    root = tree(tmp_path, {"forge": forge(3)}, ["forge"], metrics={"session_turns": 1})
    write(tmp_path / ".rcs" / "metrics.json", '{"session_turns": ')
    write(tmp_path / ".rcs" / "state" / "sessions" / SID / "team-state.json", "[1, 2]")
    w = world(root)
    assert "! 2 errors" in plain(render_spans(w, EPOCH + 3, 200)[0])
    rows = [plain(r) for r in render_spans(w, EPOCH + 3, 120, 30)]
    assert any("metrics.json: invalid JSON" in r for r in rows)
    assert any("team-state.json: expected a JSON object" in r for r in rows)


def test_stack_layout_fits_height_and_says_what_was_left_out(tmp_path):
    ws = build_workspace(tmp_path, now=FIXED)
    freeze(tmp_path)
    w = WorldLoader(ws.project, rp1_db=ws.rp1_db, clock=lambda: EPOCH + 3).load()
    rows = [plain(r) for r in render_spans(w, EPOCH + 3, 40, 6)]
    assert len(rows) == 6 and all(len(r) <= 40 for r in rows)
    # too few rows for one element each: the rows are filled, members and problems first
    assert rows[1:] == ["● forge:3/10 | ● team", "◌ blueprint:2/? stale", "▲ ultrawork root-survivor",
                        "interview→finished", "task:login-api:codegen | … 7 more"]
    roomy = [plain(r) for r in render_spans(w, EPOCH + 3, 60, 12)]  # one row each; detail rows as room allows
    assert roomy[1:4] == ["● forge:3/10", "● team:login-flow (3 workers, 1/6 done)", "    phase team-exec"]
    assert roomy[-1] == "… 5 more" and len(roomy) == 12
    for height in (2, 3):  # N rows never show fewer elements than the one-line form
        short = [plain(r) for r in render_spans(w, EPOCH + 3, 80, height)]
        one = plain(render_spans(w, EPOCH + 3, 80, 1)[0])
        assert len(short) == height and "▲ ultrawork root-survivor" in " | ".join(short)
        members = re.findall(r"[●◌▲✖◍] (\w+)", one)
        assert members and set(members) <= set(re.findall(r"[●◌▲✖◍] (\w+)", " | ".join(short))), (short, one)
    tall = [plain(r) for r in render_spans(w, EPOCH + 3, 60, 40)]
    assert "task:login-api:codegen" in tall and "rp1:build/tasks running" in tall


def run_once(args, env=None):
    full = {**os.environ, **(env or {})}
    proc = subprocess.run([str(Path(sys.executable).parent / "rcs-tui"), "hud", "--once", *args],
                          capture_output=True, text=True, env=full, timeout=60)
    assert "Traceback" not in proc.stderr
    return proc


def test_once_honours_no_color_columns_and_width(tmp_path):
    root = tree(tmp_path, {"forge": forge(9)}, ["forge"])
    colour = run_once(["--root", str(root), "--session", SID])
    assert colour.returncode == 0 and "\x1b[31mforge:9/10" in colour.stdout
    mono = run_once(["--root", str(root), "--session", SID], {"NO_COLOR": "1"})
    assert "\x1b" not in mono.stdout and "● forge:9/10" in mono.stdout
    narrow = run_once(["--root", str(root), "--session", SID], {"NO_COLOR": "1", "COLUMNS": "12"})
    assert len(narrow.stdout.rstrip("\n")) <= 12
    flag = run_once(["--root", str(root), "--session", SID, "--width", "14", "--ascii"], {"NO_COLOR": "1"})
    assert flag.stdout.rstrip("\n") == "[RCS] * forge"  # details dropped before cutting
    cut = run_once(["--root", str(root), "--session", SID, "--width", "12", "--ascii"], {"NO_COLOR": "1"})
    assert cut.stdout.rstrip("\n") == "[RCS] * for…"


def test_once_json_has_the_line_and_the_world(tmp_path):
    root = tree(tmp_path, {"forge": forge(3)}, ["forge"])
    out = json.loads(run_once(["--root", str(root), "--session", SID, "--json"]).stdout)
    assert out["line"].startswith("[RCS] ● forge:3/10")
    assert [m["mode"] for m in out["members"]] == ["forge"] and out["preset"] == "focused"


def test_once_never_imports_textual_or_rich(tmp_path):
    root = tree(tmp_path, {"forge": forge(3)}, ["forge"])
    code = ("import sys\nfrom rcs_tui.cli import main\n"
            "try:\n    main(['hud', '--once', '--root', sys.argv[1], '--session', 'sess-1'])\n"
            "except SystemExit:\n    pass\n"
            "print('MODULES', 'textual' in sys.modules, 'rich' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
    assert "forge:3/10" in proc.stdout
    assert proc.stdout.strip().endswith("MODULES False False"), proc.stdout


def test_stale_dead_pointer_is_shown(tmp_path):
    ws = build_workspace(tmp_path, now=FIXED)
    text = plain(render_spans(WorldLoader(ws.copy, rp1_db=False).load(), EPOCH, 200)[0])
    assert "session.json stale-dead" in text and "forge:9/10" in text


def test_once_errors_go_through_click(tmp_path):
    missing = run_once(["--root", str(tmp_path / "nowhere")])
    bad = run_once(["--width", "abc"])
    assert missing.returncode == 1 and json.loads(missing.stderr)["error"]
    # a usage error prints the usage line first; the JSON error is the last line
    assert bad.returncode == 2 and "abc" in json.loads(bad.stderr.strip().splitlines()[-1])["error"]


def test_data_age_is_exact_under_10s_then_in_10s_steps():
    from rcs_tui.views.hud_line import data_age

    assert [data_age(s) for s in (3, 9.9, 10, 23, 59, 60, 125)] == ["3s", "9s", "10s", "20s", "50s", "1m", "2m"]
