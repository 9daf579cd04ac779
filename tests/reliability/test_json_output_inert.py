"""`--json` output carries hostile strings sanitised: no 7- or 8-bit CSI/OSC sequence survives in any string."""

from __future__ import annotations

from tests import statefix as sf

C1_PAYLOAD = "\x9b2J\x9d0;pwned\x9c\x1b[31mred"


def test_snapshot_and_overlay_json_escape_c1_controls(tmp_path, run_cli):
    sf.mode(tmp_path, "forge", task_description=C1_PAYLOAD, current_phase="executing")
    sf.canonical(tmp_path, ["forge"])
    for args in (["snapshot", "--json"], ["hud", "--once", "--json"], ["state", "read", "--mode", "forge"]):
        res = run_cli(*args, "--root", str(tmp_path))
        assert res.code == 0, res.stderr
        assert not any("\x7f" <= ch <= "\x9f" or ch == "\x1b" for ch in res.stdout), args
    raw = run_cli("state", "read", "--mode", "forge", "--root", str(tmp_path))
    assert raw.json["task_description"] == "red", "escape sequences are removed, the text around them is kept"
