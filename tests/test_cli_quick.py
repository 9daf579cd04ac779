"""The quick commands (`hud --once`, `rp1 runs`) answered without click: they accept exactly what the
click command accepts the same way, print exactly what it prints, hand everything else to click, and
never import click; a bad configuration file, Ctrl-C and a closed pipe or stream end both paths alike."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import click
import pytest

from rcs_tui.cli import cli, main
from rcs_tui.cli.common import run
from rcs_tui.cli.quick import COMMANDS, parse
from rcs_tui.demo import build_workspace
from rcs_tui.rp1.source import Rp1Source
from tests.conftest import RCS_TUI

FIXED = datetime(2026, 11, 25, 21, 45, tzinfo=UTC)
EPOCH = FIXED.timestamp()
SID = "sess-1"


def click_command(words: tuple[str, ...]) -> click.Command:
    ctx = click.Context(cli)
    command: click.Command = cli
    for word in words:
        command = command.get_command(ctx, word)  # type: ignore[attr-defined]
    return command


def click_defaults_of(words: tuple[str, ...]) -> dict[str, object]:
    """What click gives each parameter when the command line names none."""
    return click_command(words).make_context(words[-1], []).params


def quick_of(words: tuple[str, ...]):
    found = parse([*words, *(["--once"] if words == ("hud",) else [])])
    assert found is not None
    return found[0]


@pytest.mark.parametrize("words", list(COMMANDS))
def test_every_quick_option_is_the_click_option_with_the_same_values(words):
    """Declared once for click and once for the quick path: these must never drift apart."""
    quick = quick_of(words)
    params = {opt: p for p in click_command(words).params for opt in (*p.opts, *p.secondary_opts)}
    click_defaults = click_defaults_of(words)
    for spelling, option in quick.options.items():
        param = params[spelling]
        assert param.name == option.key, spelling
        assert quick.defaults[option.key] == click_defaults[option.key], spelling
        t = param.type
        if option.kind == "flag":
            assert param.is_flag, spelling
        elif option.kind == "int":
            assert isinstance(t, click.types.IntParamType), spelling
            low = getattr(t, "min", None)
            assert (low, getattr(t, "max", None)) in ((option.low, option.high), (None, None)), spelling
            if low is None:  # click takes any integer; the quick path only positive ones, the rest go to click
                assert option.low == 1 and option.high is None
        elif option.kind == "choice":
            assert isinstance(t, click.Choice) and tuple(t.choices) == option.choices, spelling
        elif option.kind in ("dir", "file"):
            assert isinstance(t, click.Path) and t.file_okay == (option.kind == "file") \
                and t.dir_okay == (option.kind == "dir"), spelling
        else:
            assert t is click.STRING, spelling
    assert set(quick.defaults) - {quick.required} == {o.key for o in quick.options.values()} - {quick.required}


ACCEPTED = [
    ["hud", "--once"], ["hud", "--once", "--json", "--width", "14", "--ascii"], ["hud", "--preset=full", "--once"],
    ["hud", "--once", "--session-id", "s", "--session", "t", "--lines", "3"], ["hud", "--once", "--root", "."],
    ["rp1", "runs"], ["rp1", "runs", "--json", "--all-projects", "--status", "running", "--limit", "7"],
    ["rp1", "runs", "--status=waiting", "--workflow", "build", "--limit=10000", "--db", "x.db"],
    ["rp1", "runs", "--limit", "007", "--status", "failed", "--status", "completed", "--root", "/"],
]


@pytest.mark.parametrize("argv", ACCEPTED)
def test_what_the_quick_path_takes_it_reads_as_click_does(argv):
    quick, opts = parse(argv)
    words = next(w for w in COMMANDS if tuple(argv[:len(w)]) == w)
    ctx = click_command(words).make_context(words[-1], argv[len(words):])
    assert {k: ctx.params[k] for k in opts} == opts
    if quick.required:
        assert ctx.params[quick.required] is True
    defaults = click_defaults_of(words)
    for name, value in ctx.params.items():  # click's other options are left at their defaults
        if name not in opts and name != quick.required:
            assert value == defaults[name], name


@pytest.mark.parametrize("argv", [
    ["hud"], ["hud", "--inline"], ["hud", "--once", "--help"], ["hud", "--once", "--width", "abc"],
    ["hud", "--once", "--width", "-3"], ["hud", "--once", "--preset", "bogus"], ["hud", "--once", "--root"],
    ["hud", "--once", "--root="], ["hud", "--once", "--json=1"], ["hud", "--once", "--poll"],
    ["hud", "--once", "--bogus"], ["hud", "--once", "--", "x"], ["overlay", "--once"], ["--version"], [],
    ["rp1"], ["rp1", "show", "x"], ["rp1", "runs", "--help"], ["rp1", "runs", "--limit", "0"],
    ["rp1", "runs", "--limit", "10001"], ["rp1", "runs", "--limit", "+5"], ["rp1", "runs", "--status", "bogus"],
    ["rp1", "runs", "--all-projects=yes"], ["rp1", "runs", "--db"], ["rp1", "runs", "extra"],
    ["--root", ".", "rp1", "runs"], ["rp1", "runs", "--workflow", "-x"], ["rp1", "runs", "--root", __file__],
    ["rp1", "runs", "--db", "/"],
])
def test_everything_else_goes_to_click(argv):
    assert parse(argv) is None


def _capture(capsys, call) -> tuple[str, str, object]:
    try:
        rv = call()
    except SystemExit as exc:
        rv = exc.code
    out = capsys.readouterr()
    return out.out, out.err, rv


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    import time

    ws = build_workspace(tmp_path, now=FIXED)
    monkeypatch.setattr(time, "time", lambda: EPOCH + 3)
    monkeypatch.setenv("RP1_DB", str(ws.rp1_db))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("RCS_TUI_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return ws


@pytest.mark.parametrize("opts", [[], ["--json"], ["--width", "14", "--ascii"], ["--preset", "minimal"],
                                  ["--preset=full", "--width=30"], ["--session", SID, "--ascii", "--json"],
                                  ["--session-id", SID]])
def test_hud_once_prints_exactly_what_click_prints(workspace, capsys, opts):
    argv = ["hud", "--once", "--root", str(workspace.project), *opts]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow and quick[2] == 0 and quick[0].strip()


@pytest.mark.parametrize("opts", [["--json"], [], ["--json", "--all-projects"], ["--all-projects", "--limit", "2"],
                                  ["--json", "--status", "running"], ["--status", "completed", "--workflow", "build"],
                                  ["--json", "--root", "{missing}"], ["--json", "--db", "{missing}.db"]])
def test_rp1_runs_prints_exactly_what_click_prints(workspace, capsys, tmp_path, opts):
    opts = [o.replace("{missing}", str(tmp_path / "missing")) for o in opts]
    argv = ["rp1", "runs", "--root", str(workspace.project), *opts]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow
    assert quick[0].strip() or json.loads(quick[1])["error"]


def test_a_configuration_file_takes_the_full_path_which_applies_it(workspace, capsys, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text(f'rp1_db = "{workspace.rp1_db}"\n')
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    monkeypatch.delenv("RP1_DB")  # the environment would win over the file
    out, _err, rv = _capture(capsys, lambda: main(["rp1", "runs", "--json", "--root", str(workspace.project)]))
    assert rv == 0 and json.loads(out)["db"] == str(workspace.rp1_db)


def test_the_configuration_reaches_the_readers_as_arguments_not_through_the_environment(workspace, capsys, tmp_path,
                                                                                         monkeypatch):
    """The file's rp1 paths are handed to the readers; this process's environment is left as it was, on the
    quick path (checked file) and on the full one alike."""
    config = tmp_path / "config.toml"
    plugins = tmp_path / "plugins"
    config.write_text(f'rp1_db = "{workspace.rp1_db}"\nrp1_plugin_roots = ["{plugins}"]\n')
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    monkeypatch.delenv("RP1_DB")
    monkeypatch.delenv("RP1_PLUGIN_ROOTS", raising=False)
    before = dict(os.environ)
    for argv in (["rp1", "runs", "--json", "--root", str(workspace.project)],  # full path, records the check
                 ["rp1", "runs", "--json", "--root", str(workspace.project)],  # quick path
                 ["locate", "--json", "--root", str(workspace.project)]):
        out, _err, rv = _capture(capsys, lambda argv=argv: main(argv))
        doc = json.loads(out)
        assert rv == 0 and doc.get("db", doc.get("rp1_db")) == str(workspace.rp1_db)
        assert dict(os.environ) == before
    assert doc["rp1_plugin_roots"] == [str(plugins)]
    out, _err, rv = _capture(capsys, lambda: main(["hud", "--once", "--json", "--root", str(workspace.project)]))
    assert rv == 0 and json.loads(out)["rp1_run"] and dict(os.environ) == before


def test_rp1_runs_imports_no_click(workspace, tmp_path):
    code = ("import sys\nfrom rcs_tui.cli import main\n"
            "try:\n    main(['rp1', 'runs', '--json', '--all-projects', '--root', sys.argv[1]])\n"
            "except SystemExit:\n    pass\n"
            "print('MODULES', sorted(m for m in ('click', 'textual', 'rich', 'pydantic') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(workspace.project)], capture_output=True, text=True,
                          timeout=60)
    assert json.loads(proc.stdout.rsplit("MODULES", 1)[0])["runs"]
    assert proc.stdout.strip().endswith("MODULES []"), proc.stdout


@pytest.mark.parametrize("status", ["running", "waiting"])
def test_rp1_runs_imports_no_dataclasses_or_inspect(workspace, status):
    """Status lines respawn `rp1 runs` all day: neither its first call (statuses derived and kept) nor a later
    one (statuses read back) pays for `dataclasses` and the `inspect` it imports."""
    code = ("import sys\nfrom rcs_tui.cli import main\n"
            "try:\n    main(['rp1', 'runs', '--json', '--all-projects', '--status', sys.argv[1]])\n"
            "except SystemExit:\n    pass\n"
            "print('MODULES', sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n")
    for call in ("first", "later"):
        proc = subprocess.run([sys.executable, "-c", code, status], capture_output=True, text=True, timeout=60)
        runs = json.loads(proc.stdout.rsplit("MODULES", 1)[0])["runs"]
        assert [r["status"] for r in runs] == [status], (call, proc.stdout)
        assert proc.stdout.strip().endswith("MODULES []"), (call, proc.stdout)


def _quick_in_subprocess(argv: list[str], env: dict[str, str]) -> tuple[str, str, list[str]]:
    """Run `main(argv)` in a fresh interpreter: stdout, stderr and which heavy modules it imported."""
    code = ("import sys, json\nfrom rcs_tui.cli import main\n"
            "try:\n    main(json.loads(sys.argv[1]))\n"
            "except SystemExit:\n    pass\n"
            "sys.stdout.flush()\n"
            "print('MODULES', json.dumps(sorted(m for m in ('click', 'pydantic') if m in sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True,
                          timeout=60, env=env)
    out, _, modules = proc.stdout.rpartition("MODULES ")
    return out, proc.stderr, json.loads(modules)


@pytest.fixture
def fuller_config(workspace, tmp_path, monkeypatch):
    """A configuration file that sets more than the HUD preset (a theme and the rp1 database)."""
    import os

    config = tmp_path / "config.toml"
    config.write_text(f'theme = "nord"\nrp1_db = "{workspace.rp1_db}"\n')
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    monkeypatch.delenv("RP1_DB")  # the environment would win over the file
    return config, dict(os.environ)


def test_a_fuller_configuration_file_once_checked_is_applied_without_the_validating_path(
        workspace, fuller_config, capsys):
    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    first, err, modules = _quick_in_subprocess(argv, env)
    assert json.loads(first)["db"] == str(workspace.rp1_db) and "pydantic" in modules, err
    again, err, modules = _quick_in_subprocess(argv, env)
    assert again == first and modules == [], err  # the check recorded by the first call holds
    hud = ["hud", "--once", "--json", "--root", str(workspace.project)]
    quick_hud, err, modules = _quick_in_subprocess(hud, env)
    assert modules == [] and json.loads(quick_hud), err


def test_a_changed_file_is_checked_again_even_at_the_same_size(workspace, fuller_config, tmp_path):
    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    _quick_in_subprocess(argv, env)
    other = workspace.rp1_db.with_name("rp2.db")  # as long as the first path: the file keeps its size
    other.write_bytes(workspace.rp1_db.read_bytes())
    before = config.stat()
    config.write_text(config.read_text().replace(str(workspace.rp1_db), str(other)))
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert config.stat().st_size == before.st_size
    out, err, modules = _quick_in_subprocess(argv, env)
    assert "pydantic" in modules, err  # not trusted: the validating path read it
    assert json.loads(out)["db"] == str(other)


@pytest.mark.parametrize("record", [b"", b"{", b'{"stamp": [], "values": {}}', b'{"stamp": 1}', b"\xff\xfe"])
def test_a_corrupt_or_foreign_record_is_not_trusted(workspace, fuller_config, tmp_path, record):
    from rcs_tui.config.paths import CHECKED_NAME
    from rcs_tui.files.cache import cache_dir

    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    first, _, _ = _quick_in_subprocess(argv, env)
    (tmp_path / "cache" / "rcs-tui" / CHECKED_NAME).write_bytes(record)
    assert os.path.join(str(tmp_path / "cache"), "rcs-tui") == cache_dir()
    out, err, modules = _quick_in_subprocess(argv, env)
    assert out == first and "pydantic" in modules, err


def test_a_record_for_other_values_is_not_trusted(workspace, fuller_config, tmp_path):
    """A record naming another database for these very bytes (written by someone else, or by a bug) is
    still only taken when its stamp matches; a record with a value of the wrong type never is."""
    from rcs_tui.config.paths import CHECKED_NAME

    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    first, _, _ = _quick_in_subprocess(argv, env)
    path = tmp_path / "cache" / "rcs-tui" / CHECKED_NAME
    doc = json.loads(path.read_bytes())
    doc["values"]["rp1_db"] = 42
    path.write_text(json.dumps(doc))
    out, err, modules = _quick_in_subprocess(argv, env)
    assert out == first and "pydantic" in modules, err


def test_a_file_made_bad_after_its_check_is_reported(workspace, fuller_config):
    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    _quick_in_subprocess(argv, env)
    config.write_text(config.read_text() + "watch_seconds = -1\n")
    out, err, _ = _quick_in_subprocess(argv, env)
    assert out == "" and "watch_seconds" in json.loads(err)["error"] and str(config) in json.loads(err)["error"]


def test_the_environment_still_wins_over_a_checked_file(workspace, fuller_config, tmp_path):
    config, env = fuller_config
    argv = ["rp1", "runs", "--json", "--root", str(workspace.project)]
    _quick_in_subprocess(argv, env)
    copy = tmp_path / "copy.db"
    copy.write_bytes(workspace.rp1_db.read_bytes())
    out, err, modules = _quick_in_subprocess(argv, {**env, "RP1_DB": str(copy)})
    assert modules == [] and json.loads(out)["db"] == str(copy), err


@pytest.mark.parametrize("argv", [["hud", "--once", "--json"], ["hud", "--once", "--width", "30"],
                                  ["rp1", "runs", "--json", "--status", "running"]])
def test_the_command_itself_skips_teardown_with_whole_output_and_status(workspace, argv):
    """Run as `rcs-tui` (argv from the command line), a quick command ends without the interpreter's
    teardown (an exit handler never runs), yet prints exactly what `main(argv)` prints, with its status."""
    def run_as(entry: str) -> subprocess.CompletedProcess[str]:
        code = ("import atexit, sys\natexit.register(lambda: sys.stderr.write('TEARDOWN'))\n"
                f"sys.argv = ['rcs-tui', *{[*argv, '--root', str(workspace.project)]!r}]\n"
                f"from rcs_tui.cli import main\n{entry}\n")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "RP1_DB": str(workspace.rp1_db)})

    command = run_as("main()")
    called = run_as("main(sys.argv[1:])")
    assert "TEARDOWN" not in command.stderr and "TEARDOWN" in called.stderr
    assert command.stdout == called.stdout and command.stdout.strip()
    assert command.returncode == called.returncode
    assert command.stderr == called.stderr.replace("TEARDOWN", "")
    assert command.returncode == 0
    if "--json" in argv:
        assert json.loads(command.stdout)


# -- configuration, interruptions and closed streams: both paths end alike -------------------------------


def test_hud_once_applies_the_rp1_database_a_config_file_names(workspace, capsys, tmp_path, monkeypatch):
    """A config file naming the rp1 database: the line shows that database's runs, as the click path does."""
    config = tmp_path / "config.toml"
    config.write_text(f'rp1_db = "{workspace.rp1_db}"\n')
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    monkeypatch.delenv("RP1_DB")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.rp1/rp1.db to fall back on
    argv = ["hud", "--once", "--json", "--root", str(workspace.project)]
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow and slow[2] == 0
    assert json.loads(quick[0]) == json.loads(slow[0])


@pytest.mark.parametrize(("text", "flags", "words"), [
    ("= = =\n", ["--preset", "full"], "invalid TOML"),
    ("bogus_key = 1\n", [], "bogus_key"),
    ('theme = 5\n', ["--preset=minimal"], "theme"),
])
def test_hud_once_reports_a_bad_config_file_as_click_does(workspace, capsys, tmp_path, monkeypatch,
                                                          text, flags, words):
    """A bad config file is an error naming it, exit 1, whether or not `--preset` is given."""
    config = tmp_path / "config.toml"
    config.write_text(text)
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    argv = ["hud", "--once", "--root", str(workspace.project), *flags]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow
    out, err, rv = quick
    assert rv == 1 and out == "" and str(config) in json.loads(err)["error"] and words in err


@pytest.mark.parametrize("exc", [KeyboardInterrupt, lambda: BrokenPipeError(errno.EPIPE, "Broken pipe")])
@pytest.mark.parametrize("words", [["rp1", "runs"], ["hud", "--once"]])
def test_ctrl_c_and_a_closed_pipe_end_both_paths_alike(workspace, capsys, monkeypatch, exc, words):
    def interrupted(*_args: object, **_kw: object) -> None:
        raise exc()

    monkeypatch.setattr(Rp1Source, "feed", interrupted)
    monkeypatch.setattr("rcs_tui.project.answer.answer", interrupted)
    argv = [*words, "--root", str(workspace.project)]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow


def test_hud_once_takes_the_root_given_before_the_subcommand(workspace, capsys, tmp_path, monkeypatch):
    """`rcs-tui --root X hud --once` shows X, as `rcs-tui hud --once --root X` does (not "no .rcs/ here")."""
    monkeypatch.chdir(tmp_path)
    before = _capture(capsys, lambda: main(["--root", str(workspace.project), "hud", "--once", "--json"]))
    after = _capture(capsys, lambda: main(["hud", "--once", "--json", "--root", str(workspace.project)]))
    assert before == after and after[2] == 0


@pytest.mark.parametrize("argv", [["rp1", "runs", "--json", "--root", "{P}"], ["--root", "{P}", "rp1", "runs"],
                                  ["hud", "--once", "--root", "{P}"], ["--root", "{P}", "hud", "--once", "--json"]])
def test_a_closed_stdout_is_not_an_internal_error(workspace, argv):
    """`rcs-tui … >&-` (a cron line, a daemon): nothing to print to, so nothing printed and exit 0, as
    click's own echo does, never `internal error: AttributeError`."""
    import subprocess

    argv = [a.replace("{P}", str(workspace.project)) for a in argv]
    code = "import sys\nfrom rcs_tui.cli import main\nmain(sys.argv[1:])"
    closed = 'exe=$0 code=$1; shift; "$exe" -c "$code" "$@" >&-'
    proc = subprocess.run(["sh", "-c", closed, sys.executable, code, *argv], capture_output=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, b"")



@pytest.mark.parametrize("closed", ["1", "2"])
@pytest.mark.parametrize("argv", [["hud", "--once"], ["rp1", "runs", "--json"]])
def test_a_quick_command_with_a_closed_stream_ends_quietly_with_its_status(tmp_path, closed, argv):
    """`rcs-tui hud --once >&-` (or `2>&-`) in a status-line script: the command still ends with status 0
    and writes no traceback; the stream left open gets the whole answer."""
    from rcs_tui.demo import build_workspace

    ws = build_workspace(tmp_path)
    env = {**os.environ, "RP1_DB": str(ws.rp1_db), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "RCS_TUI_CONFIG": str(tmp_path / "no-config.toml")}
    cmd = [RCS_TUI, *argv, "--root", str(ws.project)]
    whole = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert whole.returncode == 0 and whole.stdout.strip(), whole.stderr
    shell = f'exec "$@" {closed}>&-'
    got = subprocess.run(["bash", "-c", shell, "rcs-tui", *cmd], capture_output=True, text=True, env=env,
                         timeout=60)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr and got.stderr == ""
    assert got.stdout == ("" if closed == "1" else whole.stdout)

