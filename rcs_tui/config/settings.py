"""The effective settings: defaults, then the configuration file, the environment and command-line flags.

The file is `$RCS_TUI_CONFIG` when set, else `$XDG_CONFIG_HOME/rcs-tui/config.toml` (XDG default
`~/.config`); a missing file means defaults. Precedence, lowest first: default < file < environment <
command-line flag; `Settings.sources` says which one won for every key (what `rcs-tui config` prints).
The file is validated by `schema`, loaded only when there is a file: without one, nothing here needs it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rcs_tui.config.paths import ENV_KEYS, config_absent, config_path
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.attention import ALERT_KINDS

# Every key and its default, `[alerts]` keys as `alerts.<key>`; the file's schema takes its defaults from here.
DEFAULTS: dict[str, Any] = {
    "theme": None, "hud_preset": None, "rp1_db": None, "rp1_plugin_roots": None, "readonly": False,
    "watch_seconds": 10.0, "projects": (), "alerts.command": None, "alerts.bell": True, "alerts.tmux": False,
    "alerts.kinds": tuple(ALERT_KINDS), "alerts.min_interval": 30.0, "alerts.desktop": False, "alerts.apprise": (),
    "alerts.hold": {"waiting": 5.0}, "alerts.cooldown": 60.0, "alerts.dedupe": 600.0, "alerts.quiet_hours": None,
    "alerts.grace": 10.0, "alerts.retries": 3, "alerts.channel": {}, "serve.token": None,
}
SECRET_KEYS = frozenset({"serve.token"})  # printed as "(set)", never as their value


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file, the key and what is allowed."""

    error_kind = kinds.BAD_CONFIG


class Settings:
    """Effective settings: the file's values with environment and flags on top, and where each came from."""

    def __init__(self, path: Path, values: dict[str, Any], sources: dict[str, str]) -> None:
        self.path = path
        self.values = values
        self.sources = sources

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "exists": self.path.exists(),
                "settings": {k: {"value": "(set)" if k in SECRET_KEYS and v is not None else v,
                                 "source": self.sources[k]} for k, v in self.values.items()}}


def _file_values(path: Path) -> tuple[dict[str, Any], set[str]]:
    """Every key's value from the file (defaults where it is silent) and the keys it sets; ConfigError when
    the file is bad. Without a file: the defaults, and the schema is not loaded."""
    if config_absent(path):
        return {k: list(v) if isinstance(v, tuple) else v for k, v in DEFAULTS.items()}, set()
    from rcs_tui.config.schema import ConfigFile, read_config_file

    parsed, keys = read_config_file(path)
    values: dict[str, Any] = {}
    for name in ConfigFile.model_fields:
        value = getattr(parsed, name)
        if name in ("alerts", "serve"):  # a table: its keys as `table.key`
            values.update((f"{name}.{sub}", _plain(getattr(value, sub))) for sub in type(value).model_fields)
        else:
            values[name] = value
    return values, keys


def _plain(value: Any) -> Any:
    """A setting as plain data (a nested table's models as dicts, without the keys it leaves unset)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if dump is not None else value


def load_settings(flags: dict[str, Any] | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Read the file (ConfigError when it is bad) and apply the environment and `flags` (None = not given)."""
    env = os.environ if environ is None else environ
    path = config_path(env)
    values, keys = _file_values(path)
    sources = {name: "file" if name in keys else "default" for name in values}
    for name, var in ENV_KEYS.items():
        if env.get(var):
            raw = env[var]
            values[name] = [p for p in raw.split(os.pathsep) if p] if name == "rp1_plugin_roots" else raw
            sources[name] = f"env {var}"
    for name, value in (flags or {}).items():
        if value is not None and value != () and name in values:
            values[name] = list(value) if isinstance(value, tuple) else value
            sources[name] = "flag"
    return Settings(path, values, sources)


def rp1_paths(settings: Settings) -> tuple[str | None, list[str] | None]:
    """The effective rp1 database and plugin roots (flag, else environment, else file), `~` expanded, to hand
    to the readers as arguments; None for either that nothing sets (the reader's own default then)."""
    db, roots = settings.values["rp1_db"], settings.values["rp1_plugin_roots"]
    return (os.path.expanduser(str(db)) if db else None,
            None if roots is None else [os.path.expanduser(str(p)) for p in roots])


def effective_rp1(settings: Settings, project_root: Path | None) -> dict[str, Any]:
    """The rp1 database and plugin roots the readers will use, each with where it comes from, including the
    defaults the readers fill in themselves (the project and `~/.rp1` for plugin roots, `~/.rp1/rp1.db`):
    what `config` and `locate` both print, so they agree."""
    from rcs_tui.rp1.db import default_db_path
    from rcs_tui.rp1.machines import default_plugin_roots

    db, roots = rp1_paths(settings)
    db_source = settings.sources["rp1_db"] if db else "default"
    if roots is not None:
        source = settings.sources["rp1_plugin_roots"]
        found = [{"path": os.path.abspath(p), "source": source} for p in roots]
    else:
        found = [{"path": str(p), "source": "default: the project" if p == project_root else "default: ~/.rp1"}
                 for p in default_plugin_roots(project_root)]
    return {"rp1_db": {"path": str(default_db_path(db)), "source": db_source}, "rp1_plugin_roots": found}
