"""The house's layers hold: the core stays pure, the headless commands load no Textual, no import runs upwards."""

import subprocess
import sys


def test_core_imports_neither_textual_nor_rich():
    code = (
        "import sys, pkgutil, importlib, rcs_tui.core as c\n"
        "for m in pkgutil.iter_modules(c.__path__): importlib.import_module('rcs_tui.core.' + m.name)\n"
        "import rcs_tui.state.reader, rcs_tui.state.ops\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _imported(argv: list[str], tmp_path, first_line: bool = False) -> tuple[int, bytes, set[str]]:
    """Run `rcs-tui ARGV` with `-X importtime`: its exit status, stdout (only the first line when
    `first_line`, then stdin is closed, as a fleet reader going away does) and every module it imported."""
    import os
    from pathlib import Path

    import rcs_tui

    env = {**os.environ, "PYTHONPATH": str(Path(rcs_tui.__file__).resolve().parents[1]),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "RP1_DB": str(tmp_path / "no-rp1.db")}
    code = "import sys\nfrom rcs_tui.cli import main\nmain(sys.argv[1:])"
    with subprocess.Popen([sys.executable, "-X", "importtime", "-c", code, *argv], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        if first_line:
            out = proc.stdout.readline()
            proc.stdin.close()
            err = proc.stderr.read()
            proc.wait(timeout=60)
        else:
            out, err = proc.communicate(timeout=60)
    modules = {line.rsplit("|", 1)[-1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    return proc.returncode, out, modules


def _project(tmp_path):
    state = tmp_path / "p" / ".rcs" / "state"
    state.mkdir(parents=True)
    (state / "ralph-state.json").write_text('{"active": true, "iteration": 1}')
    return tmp_path / "p"


def test_the_fleet_protocol_and_the_status_line_never_load_textual(tmp_path):
    """`snapshot --json --follow` (what the fleet runs on a remote host) and `hud --once` (a status line)
    answer without importing Textual: both work on a host where only the read side is wanted."""
    root = _project(tmp_path)
    code, out, mods = _imported(["snapshot", "--json", "--follow", "--root", str(root)], tmp_path, first_line=True)
    assert code == 0
    assert b'"kind":"snapshot"' in out.replace(b" ", b"")
    assert "rcs_tui.project.feed" in mods
    assert not {m for m in mods if m.split(".")[0] == "textual"}
    code, out, mods = _imported(["hud", "--once", "--root", str(root)], tmp_path)
    assert code == 0 and b"[RCS]" in out
    assert not {m for m in mods if m.split(".")[0] in ("textual", "rich")}


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    """The layers contract in pyproject.toml holds: core < files < state|rp1 < views < project < fleet < ui < cli."""
    import shutil
    from pathlib import Path

    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    proc = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "broken" in proc.stdout and "0 broken" in proc.stdout


def test_the_type_checker_passes():
    """mypy (pyproject.toml [tool.mypy]) passes on the whole package: the invocation scripts/test.sh runs."""
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", "mypy", "rcs_tui"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
