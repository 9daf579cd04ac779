"""Reads are bounded and never block: FIFOs, sockets, devices and directories where files belong, an
endless `--input-file`, and a config file that is a FIFO or a device.

Every command runs as a subprocess with a timeout (most also with an address-space limit), so a reader
that blocks on a FIFO or streams /dev/zero fails the test instead of hanging the suite or the machine.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from rcs_tui.files.io import read_json
from tests import statefix as sf
from tests.conftest import RCS_TUI
from tests.fixtures_tasks import make_task
from tests.reliability.conftest import SESSION, build_busy_tree
from tests.statefix import cli_project as project

MEMORY_CAP = 1536 * 1024 * 1024  # far below what reading /dev/zero until the 8 MB cap is lifted would take
TEAM = ".rcs/state/team/alpha"
READ_COMMANDS = [["hud", "--once"], ["hud", "--once", "--json"], ["doctor"], ["doctor", "--json"],
                 ["snapshot", "--json"], ["overlay"], ["state", "list-active", "--json"],
                 ["state", "get-status", "--json"], ["task", "list"], ["task", "show", "t1", "--json"]]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_bounded(root: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """Run rcs-tui with a wall-clock timeout and a memory cap; a hang is a test failure, not a stuck suite."""
    env = {k: v for k, v in os.environ.items() if k not in ("RCS_SESSION_ID", "SESSION_ID", "CODEX_SESSION_ID")}
    env["COLUMNS"] = "200"
    try:
        proc = subprocess.run([RCS_TUI, *args, "--root", str(root)], capture_output=True, text=True,
                              timeout=timeout, env=env, preexec_fn=_limit_memory, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`rcs-tui {' '.join(args)}` did not finish within {timeout}s (blocked on a read?)")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    documented = (0, 1, 3) if args[0] == "doctor" else (0, 1)  # doctor: 3 while findings remain
    assert proc.returncode in documented, (args, proc.returncode, proc.stderr)
    return proc


def team_tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    build_busy_tree(root)
    team = root / TEAM
    sf.write(team / "config.json", {"task": "ship", "worker_count": 1})
    sf.write(team / "phase.json", {"current_phase": "team-exec"})
    sf.write(team / "workers/w1/status.json", {"state": "working", "current_task_id": "1"})
    sf.write(team / "workers/w1/heartbeat.json", {"alive": True, "pid": os.getpid(), "turn_count": 2})
    (team / "events").mkdir(parents=True)
    return root


def test_fifo_event_log_does_not_freeze_any_reader(tmp_path):
    root = team_tree(tmp_path)
    os.mkfifo(root / TEAM / "events/events.ndjson")
    for args in READ_COMMANDS:
        run_bounded(root, *args)
    doctor = json.loads(run_bounded(root, "doctor", "--json").stdout)
    errors = {f["subject"]: f["message"] for f in doctor["findings"] if f["kind"] == "file-error"}
    rel = f"{TEAM}/events/events.ndjson"
    assert errors[rel] == f"{rel}: not a regular file (a FIFO); not read"


def test_fifo_in_every_file_the_readers_open(tmp_path):
    """A FIFO in place of each state, team and task file: every read command still answers."""
    root = team_tree(tmp_path)
    targets = [".rcs/state/forge-state.json", ".rcs/state/skill-active-state.json", ".rcs/state/session.json",
               f".rcs/state/sessions/{SESSION}/team-state.json", f".rcs/state/sessions/{SESSION}/hud-state.json",
               ".rcs/metrics.json", ".rcs/hud-config.json", f"{TEAM}/config.json", f"{TEAM}/phase.json",
               f"{TEAM}/workers/w1/status.json", f"{TEAM}/workers/w1/heartbeat.json",
               ".rcs/tasks/t1/state.json", ".rcs/tasks/t2/transcript.jsonl", ".rcs/tasks/t2/review/code-review.json",
               f"{TEAM}/events/events.ndjson"]
    for rel in targets:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    for args in READ_COMMANDS + [["task", "show", "t2", "--json"]]:
        run_bounded(root, *args)
    snap = json.loads(run_bounded(root, "snapshot", "--json").stdout)
    assert {"path": ".rcs/state/forge-state.json", "error": "not a regular file (a FIFO); not read"} in snap["errors"]


def test_dev_zero_links_read_nothing(tmp_path):
    """Links to /dev/zero (an endless file) as the event log, a worker status, a transcript: refused, bounded."""
    root = team_tree(tmp_path)
    os.symlink("/dev/zero", root / TEAM / "events/events.ndjson")
    (root / TEAM / "workers/w1/status.json").unlink()
    os.symlink("/dev/zero", root / TEAM / "workers/w1/status.json")
    os.symlink("/dev/zero", root / ".rcs/tasks/t1/transcript.jsonl")
    (root / ".rcs/state/forge-state.json").unlink()
    os.symlink("/dev/zero", root / ".rcs/state/forge-state.json")
    for args in READ_COMMANDS:
        run_bounded(root, *args)
    doctor = json.loads(run_bounded(root, "doctor", "--json").stdout)
    messages = " | ".join(f["message"] for f in doctor["findings"])
    assert f"{TEAM}/events/events.ndjson: symlink leads outside .rcs/; not followed" in messages
    show = json.loads(run_bounded(root, "task", "show", "t1", "--json").stdout)
    assert show["transcript"]["error"] == "transcript.jsonl is a symlink; not followed"


def test_sockets_and_directories_where_files_belong(tmp_path):
    root = team_tree(tmp_path)
    (root / ".rcs/state/forge-state.json").unlink()
    (root / ".rcs/state/forge-state.json").mkdir()
    (root / TEAM / "workers/w1/status.json").unlink()
    (root / TEAM / "workers/w1/status.json").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"  # AF_UNIX paths are short: bind there, then move it
    sock.bind(str(short))
    os.rename(short, root / TEAM / "events/events.ndjson")
    try:
        for args in READ_COMMANDS:
            run_bounded(root, *args)
        snap = json.loads(run_bounded(root, "snapshot", "--json").stdout)
        assert {"path": ".rcs/state/forge-state.json",
                "error": "not a regular file (a directory); not read"} in snap["errors"]
        doctor = json.loads(run_bounded(root, "doctor", "--json").stdout)
        assert any("events.ndjson: not a regular file (a socket)" in f["message"] for f in doctor["findings"])
    finally:
        sock.close()


@pytest.mark.parametrize("make", ["rcs_tui.ui.console.app import ConsoleApp as App",
                                  "rcs_tui.ui.hud_app import HudApp as App"])
def test_fifo_team_log_does_not_freeze_the_console_or_the_hud(tmp_path, make):
    """The first frame and `q` still work with a FIFO event log (the console and HUD froze, blank, before)."""
    root = team_tree(tmp_path)
    os.mkfifo(root / TEAM / "events/events.ndjson")
    code = ("import asyncio, sys\nfrom pathlib import Path\n"
            f"from {make}\n"
            "async def main():\n"
            "    app = App(Path(sys.argv[1]), rp1_db=None)\n"
            "    async with app.run_test(size=(160, 48)) as pilot:\n"
            "        await pilot.pause(0.5)\n"
            "        await pilot.press('q')\n"
            "    print('quit-ok')\n"
            "asyncio.run(main())\n")
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{make} hung on a FIFO event log")
    assert "quit-ok" in proc.stdout, proc.stderr[-2000:]


def test_read_bounded_refuses_without_blocking(tmp_path):
    from rcs_tui.files.io import read_bounded

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    got = read_bounded(fifo)
    assert (got.exists, got.raw, got.kind, got.error) == (True, None, "FIFO", "not a regular file (a FIFO); not read")
    link = tmp_path / "zero"
    os.symlink("/dev/zero", link)
    assert read_bounded(link).error == "not a regular file (a character device); not read"
    assert read_bounded(link, within=tmp_path).error == "symlink leads outside .rcs/; not followed"
    assert read_bounded(link, follow_links=False).error == "is a symlink; not followed"
    assert time.monotonic() - started < 5


def test_read_bounded_caps_size_and_reads_tails(tmp_path):
    from rcs_tui.files.io import read_bounded

    big = tmp_path / "big"
    big.write_bytes(b"a" * 1000 + b"\nlast line\n")
    assert read_bounded(big, max_bytes=100).error == "too large (1011 bytes > 100)"
    tail = read_bounded(big, max_bytes=11, part="tail")
    assert (tail.raw, tail.truncated) == (b"\nlast line\n", True)
    head = read_bounded(big, max_bytes=4, part="head")
    assert (head.raw, head.truncated) == (b"aaaa", True)


def test_parent_directory_link_out_of_the_tree_is_refused(tmp_path):
    """A symlinked directory on the way (not only the last component) cannot lead a read out of `.rcs`."""
    outside = tmp_path / "outside"
    sf.write(outside / "status.json", {"state": "working", "current_task_id": "SECRET"})
    rcs = tmp_path / "proj/.rcs"
    (rcs / "state/team/alpha/workers").mkdir(parents=True)
    os.symlink(outside, rcs / "state/team/alpha/workers/w1")
    got = read_json(rcs / "state/team/alpha/workers/w1/status.json", within=rcs)
    assert (got.data, got.error) == (None, "symlink leads outside .rcs/; not followed")


@pytest.mark.parametrize("content", [b'{"active": true, "iteration": NaN}', b'{"active": true, "x": Infinity}',
                                     b'{"active": true, "x": -Infinity}', b'{"active": true, "x": 1e999}'])
def test_non_finite_numbers_are_not_json(tmp_path, content):
    path = tmp_path / "forge-state.json"
    path.write_bytes(content)
    got = read_json(path)
    assert got.data is None and got.error.startswith("invalid JSON: ")


def _no_constant(name: str) -> None:
    pytest.fail(f"{name} in --json output: not JSON")


def test_nan_in_state_never_reaches_json_output(tmp_path, run_cli):
    root = tmp_path
    sf.mode(root, "forge", current_phase="executing")
    (root / ".rcs/state/forge-state.json").write_text('{"active": true, "iteration": NaN, "max_iterations": Infinity}')
    make_task(root, "t1", "codegen", state={"phase": "codegen", "actors": {}, "score": float("inf")})
    for args in (["snapshot", "--json"], ["hud", "--once", "--json"], ["state", "get-status", "--json"],
                 ["task", "list", "--json"], ["doctor", "--json"]):
        res = run_cli(*args, "--root", str(root))
        assert res.code == (3 if args[0] == "doctor" else 0), (args, res.stderr)  # doctor: 3 = findings remain
        json.loads(res.stdout, parse_constant=_no_constant)


def test_the_console_never_blocks_on_a_fifo_named_by_a_refusal_or_an_entry(tmp_path):
    """A refusal's "what wrote it" and a journal entry's "the file now" read the file through the bounded
    reader: a FIFO swapped in where a mode file was answers at once instead of hanging the console."""
    import os
    import threading

    from rcs_tui.files.io import digest
    from rcs_tui.ui.console.entry import after_bytes
    from rcs_tui.ui.console.refusals import writer_of

    fifo = tmp_path / ".rcs" / "state" / "forge-state.json"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.extend([
        writer_of(fifo),
        after_bytes(tmp_path, [], {"path": ".rcs/state/forge-state.json", "after_sha": digest(b"{}")})]),
        daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "a read blocked on the FIFO"
    assert got[0] == ""


def test_a_statusline_payload_that_keeps_trickling_is_not_waited_on():
    """An agent statusline pipe that sends a byte every 5 ms (and never ends) once kept `hud --once` reading
    forever; the payload now has an overall deadline, and a cut-off payload counts as none."""
    import os
    import threading
    import time

    from rcs_tui.cli.once import STDIN_DEADLINE, read_stdin_payload

    read_end, write_end = os.pipe()
    stop = threading.Event()

    def trickle() -> None:
        os.write(write_end, b'{"cwd": "/')
        while not stop.is_set():
            os.write(write_end, b"a")
            time.sleep(0.005)

    writer = threading.Thread(target=trickle, daemon=True)
    writer.start()
    try:
        started = time.monotonic()
        assert read_stdin_payload(read_end) is None
        assert time.monotonic() - started < STDIN_DEADLINE + 0.5
    finally:
        stop.set()
        writer.join(2)
        os.close(read_end)
        os.close(write_end)


def test_a_whole_statusline_payload_is_still_read():
    import json
    import os

    from rcs_tui.cli.once import read_stdin_payload

    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"cwd": "/tmp/x", "workspace": {"current_dir": "/tmp/x"}}).encode())
    os.close(write_end)
    try:
        assert read_stdin_payload(read_end) == {"cwd": "/tmp/x", "workspace": {"current_dir": "/tmp/x"}}
    finally:
        os.close(read_end)


def test_input_file_is_bounded(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    res = run_cli("state", "write", "--mode", "forge", "--input-file", "/dev/zero", "--root", str(root), timeout=30)
    assert res.code == 1 and "larger than" in res.error


def test_config_file_that_is_a_fifo_or_device_never_hangs(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    res = run_cli("locate", "--root", str(root), env={"RCS_TUI_CONFIG": str(fifo)}, timeout=20)
    assert res.code == 1 and "not a regular file (a FIFO)" in res.error
    link = tmp_path / "zero.toml"
    link.symlink_to("/dev/zero")
    for args in (["config"], ["hud", "--once"]):
        res = run_cli(*args, "--root", str(root), env={"RCS_TUI_CONFIG": str(link)}, timeout=20)
        assert res.code == 1 and "not a regular file (a device)" in res.error, (args, res.stderr)

