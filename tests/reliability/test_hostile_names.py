"""Output never carries control sequences, in any format, from any source.

A corpus of hostile strings (OSC 52 clipboard writes, OSC 8 links, colour codes, C1 controls, bidi
overrides, zero-width characters, newlines, undecodable bytes) is put where the review found them —
worker directory names, `current_task_id` in status.json, journal fields, task directory names, rp1
payload strings, mode files — and every command's plain-text and `--json` output is checked: strict
UTF-8, no escape byte rcs-tui did not add itself, no control or invisible character, no forged line,
and `--json` still parses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from tests import statefix as sf
from tests.conftest import RCS_TUI
from tests.fixtures_tasks import make_task

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
OSC8 = "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07"
SGR = "\x1b[31;1m"
C1 = "\x9b2J\x9d0;title\x9c"
BIDI = "\u202e\u2066\u200b\u200f\ufeff"
PAYLOAD = f"{OSC52}{OSC8}{SGR}{C1}{BIDI}x\x07\x08\x7f"
FORGED = "\nFORGED: all clear"
BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
OWN_SGR = re.compile(r"\x1b\[[0-9;]*m")
TEAM = ".rcs/state/team/alpha"


def hostile_project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "proj"
    p = PAYLOAD + FORGED
    sf.mode(root, "forge", current_phase=p, task_description=p, iteration=2, max_iterations=9)
    sf.mode(root, "ultrawork", "s1", current_phase=p)
    sf.canonical(root, ["forge"])
    sf.canonical(root, ["ultrawork"], "s1")
    # team: hostile worker dir names (text, newline, undecodable bytes) and a hostile current_task_id
    team = root / TEAM
    sf.write(team / "config.json", {"task": p, "worker_count": 3})
    sf.write(team / "phase.json", {"current_phase": p})
    sf.write(team / "tasks/task-1.json", {"id": p, "subject": p, "status": "in_progress", "owner": p})
    for name in (f"w{OSC52}{BIDI}", f"w{FORGED}"):
        sf.write(team / "workers" / name / "status.json", {"state": "working", "current_task_id": p, "reason": p})
        sf.write(team / "workers" / name / "heartbeat.json", {"alive": True, "pid": sf.dead_pid(), "turn_count": 1})
    raw_dir = os.fsencode(team / "workers") + b"/w\xff\xfe"
    os.makedirs(raw_dir)
    with open(raw_dir + b"/heartbeat.json", "w") as fh:
        json.dump({"alive": False, "pid": sf.dead_pid()}, fh)
    sf.write(team / "events/events.ndjson", json.dumps({"type": p, "worker": p}) + "\n")
    # tasks: hostile directory names, one undecodable, and hostile strings in state.json
    make_task(root, "t1", "codegen", state={"phase": "codegen", "actors": {"codegen": {"status": p}}, "note": p})
    make_task(root, f"t{SGR}{BIDI}", "codegen")
    make_task(root, f"t{FORGED}", "codegen")
    os.makedirs(os.fsencode(root / ".rcs/tasks") + b"/t\xff")
    # journal: hostile fields in an entry rcs-tui would show
    journal = root / ".rcs/logs/rcs-tui-journal.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps({"id": f"20261125T000000-{OSC52}", "at": p, "actor": p, "action": p,
                                   "summary": {"mode": p}, "state": "done",
                                   "files": [{"path": f".rcs/state/{OSC8}", "why": p, "before_b64": None,
                                              "after_sha": None}], "appends": []}) + "\n")
    # rp1: hostile payload strings in the project's run
    db = Path(os.environ["RP1_DB"])
    create_db(db)
    with Rp1Writer(db, clock=FakeClock()) as w:
        rid = w.start_run("build-fast", project_path=str(root.resolve()), run_id="run1")
        w.step(rid, "plan", "running", data={"note": p})
        w.wait_for_user(rid, "plan", p)
        w.btw(rid, "plan", p)
        w.artifact(rid, "plan", f"docs/{OSC8}.md")
    return root, rid


def commands(rid: str) -> list[list[str]]:
    plain = [["hud", "--once"], ["overlay"], ["doctor"], ["journal"], ["task", "list"], ["task", "show", "t1"],
             ["task", "next", "t1"], ["locate"], ["state", "what-if", "forge"], ["rp1", "runs"], ["rp1", "show", rid],
             ["rp1", "machines"], ["task", "override", "t1", "--to", "review", "--reason", PAYLOAD, "--dry-run"]]
    as_json = [[*c, "--json"] for c in plain] + [["snapshot", "--json"], ["state", "get-status", "--json"],
                                                  ["state", "list-active", "--json"],
                                                  ["state", "read", "--mode", "forge"]]
    return plain + as_json


def run_raw(root: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, "COLUMNS": "300", **env}
    proc = subprocess.run([RCS_TUI, *args, "--root", str(root)], capture_output=True, timeout=60, env=full,
                          stdin=subprocess.DEVNULL)
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, (args, proc.stderr)
    assert proc.returncode in (0, 1), (args, proc.returncode, proc.stderr)
    return proc


def assert_clean(text: str, where: str, color: bool = False) -> None:
    rest = OWN_SGR.sub("", text) if color else text
    assert "\x1b" not in rest, f"{where}: an escape sequence reached the output: {rest!r:.300}"
    bad = BAD_CHARS.search(rest.replace("\n", "").replace("\t", ""))
    assert bad is None, f"{where}: control/invisible character {bad.group()!r} in the output"
    assert not any(line.lstrip().startswith("FORGED") for line in rest.splitlines()), f"{where}: a forged line"


def strings(data):
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from strings(v)


@pytest.mark.parametrize("color", [True, False])
def test_every_command_output_is_inert(tmp_path, color):
    root, rid = hostile_project(tmp_path)
    env = {} if color else {"NO_COLOR": "1"}
    for args in commands(rid):
        proc = run_raw(root, args, env)
        name = " ".join(a if len(a) < 20 else "PAYLOAD" for a in args)
        out = proc.stdout.decode("utf-8")  # strict: a surrogate-escaped name must not leak invalid UTF-8
        err = proc.stderr.decode("utf-8")
        assert_clean(out, name, color=color and args[:2] == ["hud", "--once"] and "--json" not in args)
        assert_clean(err, name + " (stderr)")
        if "--json" in args or args[:2] == ["state", "read"]:
            if proc.returncode == 0:
                data = json.loads(out)
                for s in strings(data):
                    assert not BAD_CHARS.search(s.replace("\n", "").replace("\t", "")), (name, s)
                    assert "\x1b" not in s, (name, s)
            else:
                assert json.loads(err)["error"]


def test_hostile_names_are_shown_not_dropped(tmp_path):
    """Sanitising keeps the visible text: names are still recognisable (undecodable bytes as \\xNN)."""
    root, _ = hostile_project(tmp_path)
    tasks = json.loads(run_raw(root, ["task", "list", "--json"], {}).stdout)["tasks"]
    ids = {t["id"] for t in tasks}
    assert {"t\\xff", "t\nFORGED: all clear", "t"} <= ids  # JSON keeps a newline, escaped as \\n
    doctor = run_raw(root, ["doctor"], {"NO_COLOR": "1"}).stdout.decode()
    assert "worker w\\xff\\xfe has a dead heartbeat" in doctor


def test_overlay_text_has_no_bidi_or_zero_width(tmp_path):
    root, _ = hostile_project(tmp_path)
    text = run_raw(root, ["overlay"], {}).stdout.decode()
    assert "forge" in text
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]", text)


async def test_console_shows_hostile_names_inert(tmp_path, monkeypatch):
    from rcs_tui.ui.console.app import ConsoleApp

    root, _ = hostile_project(tmp_path)
    app = ConsoleApp(root, rp1_db=Path(os.environ["RP1_DB"]), live=False)
    shots = []
    async with app.run_test(size=(220, 60)) as pilot:
        await pilot.pause(0.3)
        for key in ("1", "2", "3", "4", "5"):
            await pilot.press(key)
            await pilot.pause(0.2)
            shots.append(app.export_screenshot())
    for svg in shots:
        body = svg.split("<style")[0] + svg.split("</style>")[-1]
        assert "\x1b" not in body and "\x07" not in body
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff\x80-\x9f]", body)
