"""`hud --once` through its cache: a stored answer is used only while everything it came from is unchanged.

Each test first proves the cache is in use (a marker planted in the stored answer is printed), then
changes one input the way a runtime or an accident would, and checks the marker is gone and the line
tells the truth again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcs_tui.rp1.fixtures import Rp1Writer, create_db

RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")
SID = "sess-1"
MARK = "CACHED-ANSWER"


def write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def project(tmp_path: Path, iteration: int = 3) -> Path:
    root = tmp_path / "proj"
    sess = root / ".rcs" / "state" / "sessions" / SID
    write(sess / "forge-state.json", {"active": True, "current_phase": "executing", "iteration": iteration,
                                      "max_iterations": 10})
    write(sess / "skill-active-state.json", {"version": 1, "active": True, "active_skills": [
        {"skill": "forge", "active": True, "session_id": SID}]})
    return root


def settle() -> None:
    """Let the tree age past the window in which a same-tick rewrite could go unseen (the cache waits too)."""
    time.sleep(0.25)


def once(root: Path | None, *args: str, env: dict | None = None, stdin=subprocess.DEVNULL, cwd=None,
         input_: bytes | None = None) -> str:
    full = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    argv = [RCS_TUI, "hud", "--once", *(["--root", str(root)] if root else []), *args]
    proc = subprocess.run(argv, capture_output=True, env=full, timeout=60, cwd=cwd,
                          **({"input": input_} if input_ is not None else {"stdin": stdin}))
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    return proc.stdout.decode()


def cache_files() -> list[Path]:
    return sorted((Path(os.environ["XDG_CACHE_HOME"]) / "rcs-tui").glob("once-*.json"))


def plant_marker() -> Path:
    """Rewrite the stored answer so that printing it shows MARK: proof of which answer was printed."""
    [path] = cache_files()
    doc = json.loads(path.read_text())
    for seg in doc["result"]["segs"]:
        if seg[0] == "members":
            seg[1] = [[MARK, ""]]
            seg[2] = None
    path.write_text(json.dumps(doc))
    return path


def cached(root: Path, *args: str, **kw) -> Path:
    """Run once to store the answer, plant the marker, and check the next run prints it."""
    settle()
    once(root, *args, **kw)
    path = plant_marker()
    assert MARK in once(root, *args, **kw)
    return path


def test_a_rewrite_with_the_same_size_and_mtime_is_seen(tmp_path):
    root = project(tmp_path, 3)
    cached(root, "--session", SID)
    target = root / ".rcs" / "state" / "sessions" / SID / "forge-state.json"
    before = target.stat()
    with open(target, "r+b") as fh:  # in place: same inode, same size
        data = fh.read().replace(b'"iteration": 3', b'"iteration": 4')
        fh.seek(0)
        fh.write(data)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    line = once(root, "--session", SID)
    assert MARK not in line and "forge:4/10" in line


def test_a_new_file_in_a_watched_directory_is_seen(tmp_path):
    root = project(tmp_path)
    cached(root, "--session", SID)
    write(root / ".rcs" / "state" / "ultrawork-state.json", {"active": True})
    line = once(root, "--session", SID)
    assert MARK not in line and "forge:3/10" in line


def _db(path: Path, root: Path, flow: str) -> Path:
    create_db(path)
    with Rp1Writer(path) as w:
        run = w.start_run(flow, project_path=root.resolve())
        w.step(run, "plan", "running")
    return path


def test_a_swapped_rp1_database_is_seen(tmp_path):
    root = project(tmp_path)
    db = _db(tmp_path / "rp1" / "rp1.db", root, "alpha")
    other = _db(tmp_path / "other" / "rp1.db", root, "beta")
    for p in (db, other):  # checkpointed: no -wal left behind
        c = __import__("sqlite3").connect(p)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
    env = {"RP1_DB": str(db)}
    assert "rp1:alpha/plan running" in once(root, "--session", SID, env=env)
    cached(root, "--session", SID, env=env)
    os.replace(other, db)
    line = once(root, "--session", SID, env=env)
    assert MARK not in line and "rp1:beta/plan running" in line


def test_a_truncated_or_garbage_cache_is_rebuilt(tmp_path):
    root = project(tmp_path)
    path = cached(root, "--session", SID)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    line = once(root, "--session", SID)
    assert MARK not in line and "forge:3/10" in line
    json.loads(path.read_text())  # stored again, whole
    path.write_bytes(b"\x00\xff not json")
    assert "forge:3/10" in once(root, "--session", SID)


def test_a_foreign_cache_is_never_trusted(tmp_path):
    root = project(tmp_path)
    path = cached(root, "--session", SID)
    planted = path.read_text()

    doc = json.loads(planted)
    doc["key"]["root"] = "/somewhere/else"  # another project's answer under this name
    path.write_text(json.dumps(doc))
    assert MARK not in once(root, "--session", SID)

    path.write_text(planted)
    os.chmod(path, 0o666)  # writable by others: anyone could have put it there
    assert MARK not in once(root, "--session", SID)

    if os.geteuid() == 0:  # owned by another user
        path.write_text(planted)
        os.chmod(path, 0o600)
        os.chown(path, 4242, 4242)
        assert MARK not in once(root, "--session", SID)


def test_a_process_that_died_is_seen(tmp_path):
    root = project(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write(root / ".rcs" / "state" / "session.json", {"session_id": SID, "pid": child.pid, "cwd": str(root)})
        cached(root)
    finally:
        child.kill()
        child.wait()
    line = once(root)
    assert MARK not in line and "session.json stale-dead" in line


def test_changed_options_and_session_env_are_separate_answers(tmp_path):
    root = project(tmp_path)
    cached(root, "--session", SID)
    assert MARK not in once(root, "--session", SID, "--ascii")
    assert MARK not in once(root, env={"RCS_SESSION_ID": SID})


def test_the_cache_lives_in_the_xdg_cache_dir_only(tmp_path):
    root = project(tmp_path)
    settle()
    before = {p for p in root.rglob("*")}
    once(root, "--session", SID)
    assert {p for p in root.rglob("*")} == before
    [path] = cache_files()
    assert path.parent == Path(os.environ["XDG_CACHE_HOME"]) / "rcs-tui"
    assert path.stat().st_mode & 0o077 == 0 and path.parent.stat().st_mode & 0o077 == 0


def test_an_answer_built_from_a_file_stamped_at_build_time_is_not_stored(tmp_path):
    root = project(tmp_path)
    settle()
    stamp = time.time() + 30  # as if written while the build ran: a next write could keep this stamp
    os.utime(root / ".rcs" / "state" / "sessions" / SID / "forge-state.json", (stamp, stamp))
    assert "forge:3/10" in once(root, "--session", SID)
    assert cache_files() == []


WRAPPER = """
import sys
from rcs_tui.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("textual", "rich", "click", "pydantic", "typing", "dataclasses", "rcs_tui.views.world",
         "rcs_tui.project.loader", "rcs_tui.state.reader", "rcs_tui.rp1.db", "sqlite3")
print("LOADED", sorted(m for m in heavy if m in sys.modules), file=sys.stderr)
"""


def loaded(*argv: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("LOADED")][-1]
    return eval(line.split(" ", 1)[1])  # noqa: S307 - our own printed list


@pytest.mark.parametrize("extra", [[], ["--json"], ["--lines", "3"]])
def test_once_imports_no_textual_rich_click_or_pydantic(tmp_path, extra):
    root = project(tmp_path)
    settle()
    argv = ["hud", "--once", "--root", str(root), "--session", SID, *extra]
    cold = loaded(*argv)
    assert not {"textual", "rich", "click", "pydantic"} & set(cold), cold
    warm = loaded(*argv)
    assert warm == [], warm  # an unchanged tree: not even the readers are imported


# -- the agent statusline --------------------------------------------------------------------------
def payload(current: Path, project_dir: Path) -> bytes:
    return json.dumps({"session_id": "0f1e2d3c", "cwd": str(current), "model": {"display_name": "Opus"},
                       "workspace": {"current_dir": str(current), "project_dir": str(project_dir)}}).encode()


def test_statusline_payload_names_the_project(tmp_path):
    root = project(tmp_path)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = once(None, "--session", SID, cwd=elsewhere, input_=payload(deep, root))
    assert "forge:3/10" in line
    other = project(tmp_path / "other", 7)
    pinned = once(other, "--session", SID, cwd=elsewhere, input_=payload(deep, root))
    assert "forge:7/10" in pinned  # --root wins over the payload


def test_statusline_never_waits_on_an_idle_or_empty_stdin(tmp_path):
    root = project(tmp_path)
    start = time.monotonic()
    held = subprocess.Popen([RCS_TUI, "hud", "--once", "--session", SID], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=root, env={**os.environ, "NO_COLOR": "1"})
    try:
        out = held.stdout.read()  # returns once the command exits, while its stdin is still open and unwritten
        held.wait(timeout=30)
    finally:
        held.stdin.close()
    assert b"forge:3/10" in out and time.monotonic() - start < 20
    assert "forge:3/10" in once(None, "--session", SID, cwd=root, input_=b"")
    assert "forge:3/10" in once(None, "--session", SID, cwd=root, input_=b"not json at all")


def test_statusline_lines_option_stacks_rows(tmp_path):
    root = project(tmp_path)
    rows = once(root, "--session", SID, "--lines", "3", "--width", "40").rstrip("\n").split("\n")
    assert len(rows) <= 3 and rows[0].startswith("[RCS] session sess-1") and "forge:3/10" in rows[1]
    assert all(len(r) <= 40 for r in rows)


def test_readme_statusline_snippet_works_as_written(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("<!-- statusline-settings -->", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    settings = json.loads(block)
    command = settings["statusLine"]["command"]
    assert settings["statusLine"]["type"] == "command"
    root = project(tmp_path)
    write(root / ".rcs" / "state" / "session.json", {"session_id": SID, "pid": os.getpid(), "cwd": str(root)})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{Path(RCS_TUI).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["sh", "-c", command], input=payload(root / "src", root), capture_output=True,
                          cwd=elsewhere, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "forge:3/10" in proc.stdout.decode()


def test_cache_dir_follows_xdg_cache_home(tmp_path, monkeypatch):
    from rcs_tui.files.cache import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == str(tmp_path / "x" / "rcs-tui")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as the XDG spec says
    assert cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "rcs-tui")
    shutil.rmtree(tmp_path / "x", ignore_errors=True)


def test_code_stamp_covers_every_module_of_the_package(tmp_path, monkeypatch):
    """Editing any module (not only the few the answer was once keyed on) gives a new stamp, so an edited
    install never serves an answer built by older code; compiled caches do not count."""
    from rcs_tui.files import cache as once_mod

    pkg = tmp_path / "rcs_tui"
    for rel in ("cli/once.py", "files/io.py", "core/policy.py", "__init__.py"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("x = 1\n")
    monkeypatch.setattr(once_mod, "PACKAGE_DIR", str(pkg))
    first = once_mod.code_stamp()
    (pkg / "files/__pycache__").mkdir()
    (pkg / "files/__pycache__/io.cpython-312.pyc").write_bytes(b"\0")
    assert once_mod.code_stamp() == first
    (pkg / "core/policy.py").write_text("x = 2\n")  # same size, new mtime
    os.utime(pkg / "core/policy.py", ns=(1, 1))
    second = once_mod.code_stamp()
    assert second != first
    (pkg / "core/new_rule.py").write_text("")
    assert once_mod.code_stamp() not in (first, second)


def test_the_json_answer_prints_the_same_document_built_or_cached(tmp_path):
    root = project(tmp_path)
    settle()
    built = once(root, "--session", SID, "--json", "--lines", "2")
    again = once(root, "--session", SID, "--json", "--lines", "2")  # from the cache: stored as text, not parsed
    assert again == built
    doc = json.loads(built)
    assert list(doc)[-2:] == ["line", "lines"] and "forge:3/10" in doc["line"]  # the line, fitted at print time
    assert built.startswith('{\n  "') and built.endswith("\n}\n")
    cached(root, "--session", SID, "--json")
    doc = json.loads(once(root, "--session", SID, "--json"))
    assert MARK in doc["line"] and doc["session"]["session_id"] == SID
