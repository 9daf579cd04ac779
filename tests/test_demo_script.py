"""`bash scripts/demo.sh`: while pip installs, a line says so and moves; afterwards the script says how to put
`rcs-tui` on PATH when it is not, since every later recipe in the README calls it by name.

pip is played by a stand-in venv (a `python` that answers the install in a few seconds and makes an
`rcs-tui` that only says it ran), so this runs offline and quickly, through the real scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "scripts" / "demo.sh"


def fake_venv(where: Path, pip_seconds: float = 3.0) -> Path:
    """A venv whose `python -m pip install -e …` takes `pip_seconds`, printing pip-like steps to its log."""
    venv = where / "venv"
    (venv / "bin").mkdir(parents=True)
    half = pip_seconds / 2
    python = venv / "bin" / "python"
    python.write_text(f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    [ "$4" = "-e" ] || exit 0
    echo "Collecting textual"; sleep {half}
    echo "Installing collected packages: rcs-tui"; sleep {half}
    printf '#!/bin/sh\\necho "demo ran: $*"\\n' > "{venv}/bin/rcs-tui"
    chmod +x "{venv}/bin/rcs-tui"
    exit 0
fi
[ "$1" = "-m" ] && [ "$2" = "compileall" ] && exit 0
exec {sys.executable} "$@"
""")
    python.chmod(0o755)
    return venv


def run_demo(venv: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RCS_TUI_VENV": str(venv), "PATH": path, "HOME": str(venv.parent)}
    return subprocess.run(["bash", str(DEMO), *args], env=env, capture_output=True, text=True, timeout=120)


def test_the_install_says_what_it_does_and_shows_progress_then_the_demo_runs(tmp_path):
    venv = fake_venv(tmp_path)
    res = run_demo(venv, "/usr/bin:/bin", "--dir", "x")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "demo ran: demo --dir x\n"
    lines = res.stderr.splitlines()
    assert lines[0] == (f"rcs-tui: installing rcs-tui into {venv} (first run or pyproject.toml changed; "
                        "takes about 20 s)…")
    assert set(lines[1]) == {"."} and len(lines[1]) >= 1  # not a terminal: a dot every two seconds
    assert lines[2].startswith(f"rcs-tui: installed into {venv} (") and lines[2].endswith(" s)")
    again = run_demo(venv, "/usr/bin:/bin")  # installed and unchanged: no install line, straight to the demo
    assert again.stdout == "demo ran: demo\n" and "installing" not in again.stderr


def test_when_rcs_tui_is_not_on_path_the_script_says_how_to_put_it_there(tmp_path):
    venv = fake_venv(tmp_path, pip_seconds=0.2)
    res = run_demo(venv, "/usr/bin:/bin")
    assert res.returncode == 0, res.stderr
    hint = res.stderr.splitlines()[-4:]
    assert hint == [
        f"rcs-tui is installed in {venv}/bin/rcs-tui, which is not on your PATH; the README's recipes call "
        "`rcs-tui`. Either:",
        "  bash scripts/demo.sh --link  # a link in ~/.local/bin: new shells, tmux and agents find it there",
        f"  source {venv}/bin/activate  # this shell only (not a tmux server or agent started elsewhere)",
        f"  pipx install {REPO}  # an install of its own"]
    linked = run_demo(venv, "/usr/bin:/bin", "--link")
    assert linked.returncode == 0, linked.stderr
    link = tmp_path / ".local" / "bin" / "rcs-tui"
    assert link.resolve() == (venv / "bin" / "rcs-tui").resolve()
    assert linked.stdout.splitlines() == [
        f"linked {link} -> {venv}/bin/rcs-tui",
        "~/.local/bin is not on your PATH yet: add  export PATH=\"$HOME/.local/bin:$PATH\"  to your shell's rc file"]
    quiet = run_demo(venv, f"{link.parent}:/usr/bin:/bin")
    assert quiet.stdout == "demo ran: demo\n" and quiet.stderr == ""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_on_a_terminal_the_line_shows_pips_latest_step(tmp_path):
    from tmuxfix import tmux_server

    venv = fake_venv(tmp_path, pip_seconds=6.0)
    with tmux_server(tmp_path, env={"RCS_TUI_VENV": str(venv), "HOME": str(tmp_path)}) as tmux:
        tmux.run("respawn-pane", "-k", "-t", "t", f"bash {DEMO}; sleep 30")
        shown = tmux.wait(lambda: tmux.pane_text("t"), lambda text: "Installing collected packages" in text)
        assert "rcs-tui: installing rcs-tui into" in shown and "  Installing collected packages: rcs-tui" in shown
        done = tmux.wait(lambda: tmux.pane_text("t"), lambda text: "demo ran: demo" in text)
    assert "demo ran: demo" in done and "Installing collected packages" not in done  # the progress line is gone
