"""As an agent's statusline (a JSON payload on stdin), `hud --once` in a directory with no project prints a
short neutral line and succeeds, so the agent's status bar shows no error on every turn; run by hand (no
payload) or asked for JSON, it keeps its clear error."""

from __future__ import annotations

import json

PAYLOAD = json.dumps({"workspace": {"current_dir": "", "project_dir": ""}, "model": {"display_name": "x"}})


def test_a_statusline_outside_a_project_gets_a_neutral_line(tmp_path, run_cli):
    payload = PAYLOAD.replace('"current_dir": ""', f'"current_dir": "{tmp_path}"')
    res = run_cli("hud", "--once", cwd=tmp_path, input=payload, env={"RCS_ROOT": ""})
    assert (res.code, res.stdout, res.stderr) == (0, "[RCS] no project here\n", "")


def test_by_hand_or_as_json_it_is_still_an_error(tmp_path, run_cli):
    by_hand = run_cli("hud", "--once", cwd=tmp_path, input="", env={"RCS_ROOT": ""})
    assert by_hand.code == 1 and json.loads(by_hand.stderr)["kind"] == "no_project" and by_hand.stdout == ""
    payload = PAYLOAD.replace('"current_dir": ""', f'"current_dir": "{tmp_path}"')
    as_json = run_cli("hud", "--once", "--json", cwd=tmp_path, input=payload, env={"RCS_ROOT": ""})
    assert as_json.code == 1 and json.loads(as_json.stderr)["kind"] == "no_project"
