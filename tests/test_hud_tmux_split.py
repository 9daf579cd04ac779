"""`hud --tmux` opens the HUD in a split that reads what the command that opened it reads: the same rp1
database, plugin roots and configuration file, whatever the tmux server's own environment says.

Run against a real tmux server on a socket of the test's own."""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest
from tmuxfix import tmux_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_the_split_gets_the_same_database_and_config_exactly(tmp_path, run_cli):
    """Paths holding what a shell or tmux would expand reach the split as they are, and run nothing."""
    project = tmp_path / "proj"
    (project / ".rcs").mkdir(parents=True)
    marker = project / "pwned"  # the split runs in the project: a command that ran would make this file
    hostile = tmp_path / "d #(touch pwned) $(touch pwned) `touch pwned` 'q\" #{pane_id} ~"
    hostile.mkdir()
    fake = tmp_path / "bin" / "rcs-tui"  # stands in for the HUD: records what the split hands it
    fake.parent.mkdir()
    dump = tmp_path / "split.json"
    fake.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    f"json.dump({{'argv': sys.argv[1:], 'env': dict(os.environ)}}, open({str(dump)!r}, 'w'))\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    db, config, plugins = hostile / "rp1.db", hostile / "config.toml", hostile / "plugins"
    with tmux_server(tmp_path, env={"RP1_DB": "/elsewhere/rp1.db", "RP1_PLUGIN_ROOTS": "/elsewhere"}) as tmux:
        res = run_cli("hud", "--tmux", "--root", str(project), cwd=project,
                      env={"TMUX": tmux.env, "RP1_DB": str(db), "RCS_TUI_CONFIG": str(config),
                           "RP1_PLUGIN_ROOTS": str(plugins), "PATH": f"{fake.parent}:/usr/bin:/bin"})
        assert (res.code, res.stdout) == (0, "HUD opened in a new tmux pane\n"), res.stderr
        tmux.wait(lambda: str(dump.exists()), lambda seen: seen == "True")
    got = json.loads(dump.read_text())
    assert got["argv"] == ["hud", "--root", str(project)]
    assert {k: got["env"][k] for k in ("RP1_DB", "RCS_TUI_CONFIG", "RP1_PLUGIN_ROOTS")} == {
        "RP1_DB": str(db), "RCS_TUI_CONFIG": str(config), "RP1_PLUGIN_ROOTS": str(plugins)}
    assert not marker.exists()


def test_the_split_shows_the_runs_of_the_database_it_was_opened_with(tmp_path, run_cli):
    """The tmux server knows no RP1_DB; the HUD in the split still shows the demo database's current run."""
    built = run_cli("demo", "--build-only", "--dir", str(tmp_path / "demo"))
    assert built.code == 0, built.stderr
    project, db = tmp_path / "demo" / "project", tmp_path / "demo" / "rp1" / "rp1.db"
    with tmux_server(tmp_path, env={"RP1_DB": None}) as tmux:  # type: ignore[dict-item]
        res = run_cli("hud", "--tmux", "--root", str(project), cwd=project,
                      env={"TMUX": tmux.env, "RP1_DB": str(db), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
        assert res.code == 0, res.stderr
        split = tmux.run("list-panes", "-t", "t", "-F", "#{pane_id}").split()[-1]
        shown = tmux.wait(lambda: tmux.pane_text(split), lambda text: "rp1:build/tasks running" in text)
    assert "rp1:build/tasks running" in shown, shown
