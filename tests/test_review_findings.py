"""Defects found by reviewing the quick CLI path, the inotify batches, the rp1 status reads and the fleet
hub's session ending: each test is the user-visible behaviour that was wrong."""

from __future__ import annotations

import errno
import json

import pytest

from rcs_tui.cli import cli, main
from rcs_tui.cli.common import run
from rcs_tui.cli.quick import parse
from rcs_tui.rp1.source import Rp1Source
from tests.test_cli_quick import _capture, workspace  # noqa: F401 - the fixture

# -- quick CLI path -----------------------------------------------------------------------------


def test_hud_once_applies_the_rp1_database_a_config_file_names(workspace, capsys, tmp_path, monkeypatch):  # noqa: F811
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
def test_hud_once_reports_a_bad_config_file_as_click_does(workspace, capsys, tmp_path, monkeypatch,  # noqa: F811
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


@pytest.mark.xfail(strict=True, reason="click's main turns Ctrl-C into Abort (exit 1, 'aborted') and a closed "
                                       "stdout into exit 1; the quick path exits 130 / 0")
@pytest.mark.parametrize("exc", [KeyboardInterrupt, lambda: BrokenPipeError(errno.EPIPE, "Broken pipe")])
@pytest.mark.parametrize("words", [["rp1", "runs"], ["hud", "--once"]])
def test_ctrl_c_and_a_closed_pipe_end_both_paths_alike(workspace, capsys, monkeypatch, exc, words):  # noqa: F811
    def interrupted(*_args: object, **_kw: object) -> None:
        raise exc()

    monkeypatch.setattr(Rp1Source, "feed", interrupted)
    monkeypatch.setattr("rcs_tui.cli.once.answer", interrupted)
    argv = [*words, "--root", str(workspace.project)]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow
