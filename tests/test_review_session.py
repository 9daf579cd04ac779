"""The quick commands' use of a checked configuration file, and the live widgets that repaint only what
changed: what a user sees stays what the full path and a fresh paint would show."""

from __future__ import annotations

import json
import os
import py_compile
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.geometry import Region

from rcs_tui.demo import build_workspace
from rcs_tui.ui.linetable import LineTable
from tests.test_linetable import Host, rows_of


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    ws = build_workspace(tmp_path / "ws")
    monkeypatch.delenv("RP1_DB", raising=False)
    monkeypatch.delenv("RP1_PLUGIN_ROOTS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return ws


def test_a_nul_in_a_path_setting_is_a_file_error_on_the_full_and_the_quick_path(run_cli, workspace, tmp_path):
    """A path holding NUL cannot be handed to the rp1 readers (nor be any file): the file is reported, naming
    the key, on the first call and on the next (which the quick path would answer from a record)."""
    for key, value in (("rp1_db", f'"{workspace.rp1_db}\\u0000x"'), ("rp1_plugin_roots", '["/a\\u0000b"]')):
        cfg = tmp_path / f"{key}.toml"
        cfg.write_text(f"{key} = {value}\n")
        env = {"RCS_TUI_CONFIG": str(cfg)}
        for argv in (["rp1", "runs", "--json"], ["hud", "--once"], ["rp1", "runs"], ["hud", "--once", "--json"]):
            res = run_cli(*argv, "--root", str(workspace.project), env=env)
            assert res.code == 1 and res.stdout == "", (key, argv, res)
            assert json.loads(res.stderr.splitlines()[-1])["error"].startswith(f"{cfg}: {key}"), (key, argv)


# -- an installed copy of the package, to change its code as an upgrade or an edit would -------------------
@pytest.fixture
def package(tmp_path) -> Path:
    import rcs_tui

    dest = tmp_path / "pkg"
    shutil.copytree(Path(rcs_tui.__file__).parent, dest / "rcs_tui", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run_package(package: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "import sys, rcs_tui\nassert rcs_tui.__file__.startswith(sys.argv[1]), rcs_tui.__file__\n" \
           "del sys.argv[1]\nfrom rcs_tui.cli import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", code, str(package), *argv], capture_output=True, text=True,
                          timeout=60, cwd=package, env={**os.environ, **env, "PYTHONPATH": str(package)})


def test_a_record_made_by_other_validation_code_is_not_trusted(workspace, package, tmp_path):
    """The alert kinds a file may name are the fleet's: when an upgrade (same version, same schema module)
    drops one, a file naming it is reported, not applied from the record the older code left."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'rp1_db = "{workspace.rp1_db}"\n[alerts]\nkinds = ["resurrected"]\n')
    env = {"RCS_TUI_CONFIG": str(cfg)}
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    first = run_package(package, argv, env)
    assert first.returncode == 0 and json.loads(first.stdout)["db"] == str(workspace.rp1_db), first.stderr
    attention = package / "rcs_tui" / "core" / "attention.py"
    old = "ALERT_KINDS: tuple[str, ...] = tuple(dict.fromkeys(k.alert for k in NEEDS_YOU if k.alert))"
    assert old in attention.read_text()
    attention.write_text(attention.read_text().replace(
        old, old.replace("if k.alert))", 'if k.alert and k.alert != "resurrected"))')))
    full = run_package(package, ["config"], env)
    assert full.returncode == 1 and "alerts.kinds.0" in full.stderr, full.stderr
    quick = run_package(package, argv, env)
    assert quick.returncode == 1 and quick.stdout == "", quick.stdout
    assert "alerts.kinds.0" in json.loads(quick.stderr.splitlines()[-1])["error"]


def test_an_install_without_module_sources_still_reads_its_configuration_file(workspace, package, tmp_path):
    """Installs that ship only compiled modules have no `schema.py` beside `paths.py`: the check's record
    is then a miss (a slower next call), never a crash of every command that reads the file."""
    for source in (package / "rcs_tui" / "config").glob("*.py"):
        py_compile.compile(str(source), cfile=str(source.with_suffix(".pyc")), doraise=True)
        source.unlink()
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'rp1_db = "{workspace.rp1_db}"\ntheme = "nord"\n')
    env = {"RCS_TUI_CONFIG": str(cfg)}
    shown = run_package(package, ["config", "--json"], env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert json.loads(shown.stdout)["settings"]["theme"] == {"value": "nord", "source": "file"}
    for _ in range(2):
        runs = run_package(package, ["rp1", "runs", "--json", "--root", str(workspace.project)], env)
        assert runs.returncode == 0 and json.loads(runs.stdout)["db"] == str(workspace.rp1_db), runs.stderr


# -- LineTable: the lines repainted are every line whose content changed ------------------------------------
def painted(table: LineTable) -> list[str]:
    """The lines as the screen holds them (Textual's line cache: only lines marked dirty were drawn again)."""
    return [s.text for s in table.render_lines(Region(0, 0, table.size.width, table.size.height))]


def drawn_now(table: LineTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def test_after_any_updates_the_table_shows_what_a_fresh_paint_shows():
    """Re-sorts, rows added, dropped and replaced, cells changed, cursor moves and scrolling in random
    order: after each, every line on screen is the one a full repaint would draw."""
    for seed in range(12):
        rng = random.Random(seed)
        keys = [f"r{i:02d}" for i in range(rng.randint(0, 30))]
        marks: dict[str, str] = {}
        app = Host(keys)
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            table = app.query_one(LineTable)
            for step in range(30):
                op = rng.choice(["move", "mark", "cursor", "add", "drop", "replace", "scroll"])
                if op == "move" and keys:
                    key = keys.pop(rng.randrange(len(keys)))
                    keys.insert(rng.randrange(len(keys) + 1), key)
                elif op == "mark" and keys:
                    marks[rng.choice(keys)] = rng.choice(["ok", "FAILED", "waiting"])
                elif op == "cursor" and keys:
                    table.move_cursor(rng.randrange(len(keys)))
                elif op == "add":
                    keys.insert(rng.randrange(len(keys) + 1), f"n{step}")
                elif op == "drop" and keys:
                    keys.pop(rng.randrange(len(keys)))
                elif op == "replace" and keys:
                    keys[rng.randrange(len(keys))] = f"s{step}"
                elif op == "scroll":
                    table.scroll_to(y=rng.randrange(30), animate=False)
                if op not in ("cursor", "scroll"):
                    table.set_rows(rows_of(keys, marks))
                # twice: the messages and layout an update brings about, then a frame; no idle wait needed
                await pilot.pause(0)
                await pilot.pause(0)
                assert painted(table) == drawn_now(table), (seed, step, op)


def test_config_says_a_path_set_only_by_the_file_came_from_the_file(run_cli, workspace, tmp_path):
    """Every command hands the file's rp1 paths on in the environment before it runs; `rcs-tui config`
    must still name the file as their source (the environment names none), and the environment when it
    does."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('rp1_db = "~/x.db"\nrp1_plugin_roots = ["~/plugins"]\n')
    shown = run_cli("config", "--json", env={"RCS_TUI_CONFIG": str(cfg)}).json["settings"]
    assert shown["rp1_db"] == {"value": "~/x.db", "source": "file"}
    assert shown["rp1_plugin_roots"] == {"value": ["~/plugins"], "source": "file"}
    env = {"RCS_TUI_CONFIG": str(cfg), "RP1_DB": "/srv/rp1.db"}
    assert run_cli("config", "--json", env=env).json["settings"]["rp1_db"] == {"value": "/srv/rp1.db",
                                                                               "source": "env RP1_DB"}
