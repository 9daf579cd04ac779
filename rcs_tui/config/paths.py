"""Where the configuration file is, and a cheap read of the one key the one-shot HUD line needs.

Kept free of pydantic so `hud --once` (run by status lines several times a second) stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_ENV = "RCS_TUI_CONFIG"
PRESETS = ("minimal", "focused", "full")


def config_path(environ: dict[str, str] | os._Environ[str] | None = None) -> Path:
    """`$RCS_TUI_CONFIG`, else `$XDG_CONFIG_HOME/rcs-tui/config.toml`, else `~/.config/rcs-tui/config.toml`."""
    env = os.environ if environ is None else environ
    explicit = env.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "rcs-tui" / "config.toml"


def quick_preset() -> str | None:
    """The file's `hud_preset`, read with tomllib only.

    None when there is no file or no such key; ValueError when the file or the value is bad, so the
    caller hands over to the validating path, which reports it properly.
    """
    try:
        raw = config_path().read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(str(exc)) from exc
    import tomllib  # only when there is a file to parse

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    value = data.get("hud_preset")
    if value is not None and value not in PRESETS:
        raise ValueError(f"hud_preset {value!r}")
    return value
