"""The config file (`rcs-tui config`, errors, precedence, where each setting came from, its checked record
across an upgrade or an install without sources) and the versioned snapshot document (`--follow`)."""

from __future__ import annotations

import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcs_tui.demo import build_workspace
from tests.conftest import RCS_TUI
from tests.statefix import canonical, mode


def project(root: Path) -> Path:
    mode(root, "forge", iteration=1, phase="execute")
    canonical(root, ["forge"])
    return root


class TestConfig:
    def test_defaults_and_where_each_setting_came_from(self, run_cli, tmp_path):
        cfg = tmp_path / "config.toml"
        cfg.write_text('theme = "nord"\nreadonly = true\nprojects = ["~/code/*"]\n[alerts]\nbell = false\n')
        res = run_cli("config", "--json", env={"RCS_TUI_CONFIG": str(cfg), "RP1_DB": "/srv/rp1.db"})
        assert res.code == 0, res.stderr
        data = res.json
        assert data["path"] == str(cfg) and data["exists"] is True
        s = data["settings"]
        assert s["theme"] == {"value": "nord", "source": "file"}
        assert s["readonly"] == {"value": True, "source": "file"}
        assert s["projects"] == {"value": ["~/code/*"], "source": "file"}
        assert s["alerts.bell"] == {"value": False, "source": "file"}
        assert s["alerts.min_interval"] == {"value": 30.0, "source": "default"}
        assert s["rp1_db"] == {"value": "/srv/rp1.db", "source": "env RP1_DB",
                               "effective": {"path": "/srv/rp1.db", "source": "env RP1_DB"}}
        assert s["watch_seconds"] == {"value": 10.0, "source": "default"}

    def test_xdg_location_and_locate_shows_it(self, run_cli, tmp_path):
        xdg = tmp_path / "xdg"
        (xdg / "rcs-tui").mkdir(parents=True)
        (xdg / "rcs-tui" / "config.toml").write_text('hud_preset = "minimal"\n')
        env = {"RCS_TUI_CONFIG": "", "XDG_CONFIG_HOME": str(xdg)}
        res = run_cli("config", "--json", env=env)
        assert res.json["settings"]["hud_preset"] == {"value": "minimal", "source": "file"}
        root = project(tmp_path / "p")
        loc = run_cli("locate", "--json", "--root", str(root), env=env)
        assert loc.json["config"] == str(xdg / "rcs-tui" / "config.toml")

    def test_unknown_key_names_file_key_and_known_keys(self, run_cli, tmp_path):
        cfg = tmp_path / "config.toml"
        cfg.write_text('themes = "nord"\n')
        res = run_cli("config", env={"RCS_TUI_CONFIG": str(cfg)})
        assert res.code == 1
        assert res.error.startswith(f"{cfg}: themes: unknown key (known keys: theme, hud_preset, ")

    def test_bad_value_names_what_is_allowed_for_every_command(self, run_cli, tmp_path):
        cfg = tmp_path / "config.toml"
        cfg.write_text('hud_preset = "huge"\n[alerts]\nkinds = ["waiting", "lunch"]\n')
        root = project(tmp_path / "p")
        for args in (["config"], ["hud", "--once", "--root", str(root)], ["snapshot", "--root", str(root)]):
            res = run_cli(*args, env={"RCS_TUI_CONFIG": str(cfg)})
            assert res.code == 1, args
            assert "hud_preset: Input should be 'minimal', 'focused' or 'full'" in res.error
            assert ("alerts.kinds.1: Input should be 'waiting', 'failed', 'dead', 'silent', 'stale', 'resurrected' "
                    "or 'stale_pointer'") in res.error
            assert res.error.startswith(str(cfg))

    def test_invalid_toml_is_an_error_not_a_traceback(self, run_cli, tmp_path):
        cfg = tmp_path / "config.toml"
        cfg.write_text("theme = \n")
        res = run_cli("config", env={"RCS_TUI_CONFIG": str(cfg)})
        assert res.code == 1 and res.error.startswith(f"{cfg}: invalid TOML: ")

    def test_hud_once_takes_the_preset_from_the_file_and_the_flag_wins(self, run_cli, tmp_path):
        root = project(tmp_path / "p")
        cfg = tmp_path / "config.toml"
        cfg.write_text('hud_preset = "minimal"\n')
        env = {"RCS_TUI_CONFIG": str(cfg), "NO_COLOR": "1"}

        def line(*extra: str, env=None) -> str:  # the relative age moves with the clock: leave it out
            out = run_cli("hud", "--once", "--root", str(root), "--width", "200", *extra, env=env).stdout
            return re.sub(r"updated \S+ ago", "", out)

        plain = {"NO_COLOR": "1"}
        minimal, full = line("--preset", "minimal", env=plain), line("--preset", "full", env=plain)
        assert minimal != full
        assert line(env=env) == minimal
        assert line("--preset", "full", env=env) == full

    def test_flags_beat_the_file(self, tmp_path, monkeypatch):
        from rcs_tui.config.settings import load_settings

        cfg = tmp_path / "config.toml"
        cfg.write_text("readonly = true\nwatch_seconds = 3\n")
        monkeypatch.setenv("RCS_TUI_CONFIG", str(cfg))
        s = load_settings({"readonly": False, "watch_seconds": None})
        assert s.readonly is False and s.sources["readonly"] == "flag"
        assert s.watch_seconds == 3 and s.sources["watch_seconds"] == "file"


    def test_without_a_file_the_defaults_are_the_schemas_and_it_is_not_loaded(self, tmp_path, monkeypatch):
        """No configuration file: every key has the value and source an empty file would give, read
        without building the file's schema (which costs a console start about a quarter of a second)."""
        from rcs_tui.config.settings import load_settings

        for var in ("RP1_DB", "RP1_PLUGIN_ROOTS"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("RCS_TUI_CONFIG", str(tmp_path / "none.toml"))
        missing = load_settings()
        (tmp_path / "empty.toml").write_text("")
        monkeypatch.setenv("RCS_TUI_CONFIG", str(tmp_path / "empty.toml"))
        empty = load_settings()
        assert missing.values == empty.values and set(missing.sources.values()) == {"default"}
        assert missing.sources == empty.sources
        assert missing.values["alerts.kinds"] == ["waiting", "failed", "dead", "silent", "stale", "resurrected",
                                                  "stale_pointer"]
        code = ("import sys; from rcs_tui.config.settings import load_settings; s = load_settings({'readonly': True});"
                " print(s.readonly, s.sources['readonly'], 'pydantic' in sys.modules)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "RCS_TUI_CONFIG": str(tmp_path / "none.toml")}).stdout
        assert out.split() == ["True", "flag", "False"]

    def test_a_config_path_that_cannot_be_looked_at_is_an_error_not_defaults(self, run_cli, tmp_path):
        """Only "no such file" means defaults: a path under a regular file is reported, naming it."""
        (tmp_path / "plain").write_text("x")
        bad = tmp_path / "plain" / "config.toml"
        for args in (("config", "--json"), ("rp1", "runs", "--json", "--db", str(tmp_path / "none.db"))):
            out = run_cli(*args, env={"RCS_TUI_CONFIG": str(bad)})
            assert out.code == 1 and json.loads(out.stderr.strip().splitlines()[-1]) == {
                "error": f"{bad}: cannot read: Not a directory", "kind": "bad_config"}

class TestSnapshotDocument:
    def test_has_version_and_the_sections_the_tui_shows(self, run_cli, tmp_path):
        root = project(tmp_path / "p")
        mode(root, "autopilot", active=False, lifecycle_outcome="askuserQuestion", question="go?")
        doc = run_cli("snapshot", "--json", "--root", str(root)).json
        assert doc["version"] == "1.3" and doc["kind"] == "snapshot" and doc["seq"] == 1
        assert doc["active_set"] == ["forge"] and doc["health"] == {"live": 1}
        for key in ("team", "tasks", "tasks_by_phase", "rp1", "doctor", "attention", "last_activity", "badges"):
            assert key in doc
        assert doc["attention"]["waiting"] == ["root/autopilot"]
        assert doc["attention"]["running"] == ["root/forge"]
        assert doc["rp1"]["counts"] == {"waiting": 0, "failed": 0, "running": 0}

    def test_follow_streams_a_document_per_change_and_exits_when_stdin_closes(self, tmp_path):
        root = project(tmp_path / "p")
        proc = subprocess.Popen([RCS_TUI, "snapshot", "--json", "--follow", "--root", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = json.loads(proc.stdout.readline())
            assert first["seq"] == 1 and first["version"] == "1.3" and first["active_set"] == ["forge"]
            time.sleep(0.8)  # past the start-up re-read
            mode(root, "team", phase="team-exec")
            canonical(root, ["forge", "team"])
            docs = [json.loads(proc.stdout.readline())]
            while docs[-1]["active_set"] != ["forge", "team"]:
                docs.append(json.loads(proc.stdout.readline()))
            assert [d["seq"] for d in docs] == list(range(2, 2 + len(docs)))
            assert len(docs) <= 2  # two writes, coalesced into one or two documents
            proc.stdin.close()
            assert proc.wait(10) == 0
            assert proc.stderr.read() == ""
        finally:
            if proc.poll() is None:
                proc.kill()

    def test_heartbeat_lines_when_quiet(self, tmp_path):
        root = project(tmp_path / "p")
        proc = subprocess.Popen([RCS_TUI, "snapshot", "--json", "--follow", "--heartbeat", "0.3", "--root", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            json.loads(proc.stdout.readline())
            beat = json.loads(proc.stdout.readline())
            assert beat == {"version": "1.3", "kind": "heartbeat", "seq": 1}
        finally:
            proc.stdin.close()
            proc.wait(10)


class TestIncrementalDoctor:
    def test_a_change_in_one_session_updates_its_findings_as_a_fresh_read_would(self, tmp_path):
        from rcs_tui.project.feed import SnapshotFeed

        for sid in ("s1", "s2", "s3"):
            mode(tmp_path, "forge", session=sid, iteration=1, current_phase="execute")
            canonical(tmp_path, ["forge"], session=sid)
        feed = SnapshotFeed(tmp_path, session_id="s1")
        assert feed.document()["doctor"]["findings"] == []
        # s2's forge ends while its canonical set still lists it: a stale member there, nowhere else
        changed = mode(tmp_path, "forge", session="s2", active=False, current_phase="complete")
        doc = feed.document([changed])
        stale = [(f["kind"], f["scope"], f["subject"]) for f in doc["doctor"]["findings"]]
        assert stale == [("stale-member", "s2", "forge")]
        assert doc["doctor"] == SnapshotFeed(tmp_path, session_id="s1").build()["doctor"]
        # and it goes away again when the mode is active once more
        changed = mode(tmp_path, "forge", session="s2", iteration=2, current_phase="execute")
        assert feed.document([changed])["doctor"]["findings"] == []


# -- the file's settings on the full and the quick path, and the record of a checked file ---------------------


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


def test_config_says_a_path_set_only_by_the_file_came_from_the_file(run_cli, workspace, tmp_path):
    """Every command hands the file's rp1 paths on in the environment before it runs; `rcs-tui config`
    must still name the file as their source (the environment names none), and the environment when it
    does."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('rp1_db = "~/x.db"\nrp1_plugin_roots = ["~/plugins"]\n')
    shown = run_cli("config", "--json", env={"RCS_TUI_CONFIG": str(cfg)}).json["settings"]
    home = os.path.expanduser("~")
    assert shown["rp1_db"] == {"value": "~/x.db", "source": "file",
                               "effective": {"path": f"{home}/x.db", "source": "file"}}
    assert shown["rp1_plugin_roots"] == {"value": ["~/plugins"], "source": "file",
                                         "effective": [{"path": f"{home}/plugins", "source": "file"}]}
    env = {"RCS_TUI_CONFIG": str(cfg), "RP1_DB": "/srv/rp1.db"}
    assert run_cli("config", "--json", env=env).json["settings"]["rp1_db"] == {
        "value": "/srv/rp1.db", "source": "env RP1_DB", "effective": {"path": "/srv/rp1.db", "source": "env RP1_DB"}}


def test_config_and_locate_list_the_same_plugin_roots_and_say_where_each_comes_from(run_cli, tmp_path):
    """Nothing set: both name the project and ~/.rp1 (the readers' defaults), not `(none)` in one of them."""
    root = project(tmp_path / "p")
    home = os.path.expanduser("~")
    config = run_cli("config", cwd=root).stdout.splitlines()
    at = next(i for i, line in enumerate(config) if line.startswith("rp1_plugin_roots"))
    assert config[at:at + 2] == [f"rp1_plugin_roots     {root}  [default: the project]",
                                 f"                     {home}/.rp1  [default: ~/.rp1]"]
    located = run_cli("locate", cwd=root).stdout.splitlines()
    assert f"rp1_plugin_roots  {root} [default: the project], {home}/.rp1 [default: ~/.rp1]" in located
    as_json = run_cli("locate", "--json", cwd=root).json
    assert (as_json["rp1_plugin_roots"], as_json["rp1_plugin_root_sources"]) == (
        [str(root), f"{home}/.rp1"], ["default: the project", "default: ~/.rp1"])
    env = {"RP1_PLUGIN_ROOTS": f"/a{os.pathsep}/b"}
    assert run_cli("config", "--json", cwd=root, env=env).json["settings"]["rp1_plugin_roots"]["effective"] == [
        {"path": "/a", "source": "env RP1_PLUGIN_ROOTS"}, {"path": "/b", "source": "env RP1_PLUGIN_ROOTS"}]
    assert "rp1_plugin_roots  /a [env RP1_PLUGIN_ROOTS], /b [env RP1_PLUGIN_ROOTS]" in run_cli(
        "locate", cwd=root, env=env).stdout.splitlines()



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

