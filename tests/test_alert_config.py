"""The alert channels and rules come from `[alerts]` in config.toml (one channel's own rules from
`[alerts.channel.NAME]`) with the fleet's flags on top; a bad value names the key and what is allowed."""

from __future__ import annotations

from rcs_tui.cli.fleet_cmd import alert_settings
from rcs_tui.config.settings import load_settings

CONFIG = """
[alerts]
apprise = ["json://127.0.0.1:9/hook"]
hold = { waiting = 5 }
cooldown = 90
quiet_hours = "22:00-07:00"
grace = 20

[alerts.channel.apprise]
kinds = ["waiting", "failed"]
hold = { waiting = 60 }
quiet_hours = "21:00-08:00"
"""


def test_channels_and_rules_from_the_file_and_the_flags(tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(CONFIG)
    monkeypatch.setenv("RCS_TUI_CONFIG", str(cfg))
    values = load_settings().values
    s = alert_settings(values, urls=("ntfy://ntfy.sh/topic",), desktop=True)
    assert s.apprise == ("json://127.0.0.1:9/hook", "ntfy://ntfy.sh/topic") and s.desktop and s.grace == 20
    push = s.rules_for("apprise")
    assert push.kinds == frozenset({"waiting", "failed"})
    assert push.hold == {"waiting": 60.0} and push.cooldown == 90 and push.quiet_hours == (21 * 60, 8 * 60)
    bell = s.rules_for("bell")
    assert bell.hold == {"waiting": 5.0} and bell.quiet_hours == (22 * 60, 7 * 60) and "dead" in bell.kinds
    assert alert_settings(values, quiet_hours="").rules_for("bell").quiet_hours is None  # the flag wins


def test_the_defaults_hold_a_wait_five_seconds_and_start_with_a_grace(tmp_path, monkeypatch):
    monkeypatch.setenv("RCS_TUI_CONFIG", str(tmp_path / "none.toml"))
    s = alert_settings(load_settings().values)
    assert s.rules_for("bell").hold == {"waiting": 5.0} and s.grace == 10 and s.retries == 3


def test_bad_alert_settings_name_the_key(run_cli, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[alerts]\nquiet_hours = "25:00-07:00"\n[alerts.channel.pager]\nkinds = ["waiting"]\n')
    res = run_cli("config", env={"RCS_TUI_CONFIG": str(cfg)})
    assert res.code == 1
    assert "alerts.quiet_hours: Value error, quiet hours '25:00-07:00' are not HH:MM-HH:MM" in res.error
    assert "alerts.channel.pager" in res.error and "'command', 'bell', 'tmux', 'desktop' or 'apprise'" in res.error


def test_config_json_shows_the_channel_rules(run_cli, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(CONFIG)
    res = run_cli("config", "--json", env={"RCS_TUI_CONFIG": str(cfg)})
    assert res.code == 0, res.stderr
    got = res.json["settings"]
    assert got["alerts.channel"] == {"value": {"apprise": {"kinds": ["waiting", "failed"], "hold": {"waiting": 60.0},
                                                           "quiet_hours": "21:00-08:00"}}, "source": "file"}
    assert got["alerts.cooldown"] == {"value": 90.0, "source": "file"}
