"""The user's configuration file: where it is, what it may hold, and the effective settings.

The file is `$RCS_TUI_CONFIG` when set, else `$XDG_CONFIG_HOME/rcs-tui/config.toml` (XDG default `~/.config`).
A missing file means defaults. Every key is checked: an unknown key or a bad value is an error that names the
file, the key and what is allowed. Precedence, lowest first: default < file < environment < command-line flag;
`Settings.sources` says which one won for every key (what `rcs-tui config` prints).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rcs_tui.config.paths import config_path, read_config_bytes
from rcs_tui.fleet.attention import ALERT_KINDS

# Environment variables that set a key (they beat the file, lose to a flag).
ENV_KEYS: dict[str, str] = {"rp1_db": "RP1_DB", "rp1_plugin_roots": "RP1_PLUGIN_ROOTS"}


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file, the key and what is allowed."""


class Alerts(BaseModel):
    """`[alerts]`: what happens when a project starts needing the operator."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, description="shell command run with RCS_ALERT_* in its environment")
    bell: bool = Field(True, description="ring the terminal bell")
    tmux: bool = Field(False, description="tmux display-message when inside tmux")
    kinds: list[Literal[ALERT_KINDS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(ALERT_KINDS), description="which transitions alert")
    min_interval: float = Field(30.0, ge=0, le=86400, description="seconds between two alerts for one project")


class ConfigFile(BaseModel):
    """Everything `config.toml` may hold (nothing else: extra keys are errors)."""

    model_config = ConfigDict(extra="forbid")

    theme: str | None = Field(None, description="Textual theme name (e.g. textual-dark, nord)")
    hud_preset: Literal["minimal", "focused", "full"] | None = Field(
        None, description="HUD preset; else .rcs/hud-config.json's")
    rp1_db: str | None = Field(None, description="rp1 database path")
    rp1_plugin_roots: list[str] | None = Field(None, description="where rp1 state machines are looked up")
    readonly: bool = Field(False, description="start the console without actions that write")
    watch_seconds: float = Field(10.0, ge=0, le=3600, description="after a clear, how long to watch for a comeback")
    projects: list[str] = Field(default_factory=list, description="fleet projects: paths, globs, ssh:// URLs")
    alerts: Alerts = Field(default_factory=Alerts)

    @field_validator("projects", "rp1_plugin_roots")
    @classmethod
    def _no_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not v.strip() for v in value):
            raise ValueError("entries must be non-empty strings")
        return value


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """What a key accepts, from the schema (for error messages)."""
    target: Any = model
    field = None
    for part in loc:
        if not (isinstance(target, type) and issubclass(target, BaseModel)):
            break
        field = target.model_fields.get(str(part))
        if field is None:
            return "known keys: " + ", ".join(target.model_fields)
        target = field.annotation
    if field is None:
        return ""
    return field.description or ""


def _describe(path: Path, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not isinstance(p, int))
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            parent: Any = ConfigFile
            for part in loc[:-1]:
                parent = parent.model_fields[str(part)].annotation
            problems.append(f"{key}: unknown key (known keys: {', '.join(parent.model_fields)})")
            continue
        allowed = _allowed(ConfigFile, loc)
        problems.append(f"{key}: {err['msg']}" + (f" ({allowed})" if allowed else ""))
    return f"{path}: " + "; ".join(problems)


def read_config_file(path: Path) -> tuple[ConfigFile, set[str]]:
    """The validated file and the keys it sets; defaults (and no keys) when it does not exist."""
    try:
        raw = read_config_bytes(path)
    except FileNotFoundError:
        return ConfigFile(), set()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    try:
        parsed = ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(path, exc)) from None
    keys = set(data)
    if isinstance(data.get("alerts"), dict):
        keys |= {f"alerts.{k}" for k in data["alerts"]}
    return parsed, keys


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
                "settings": {k: {"value": v, "source": self.sources[k]} for k, v in self.values.items()}}


def load_settings(flags: dict[str, Any] | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Read the file (ConfigError when it is bad) and apply the environment and `flags` (None = not given)."""
    env = os.environ if environ is None else environ
    path = config_path(env)
    parsed, keys = read_config_file(path)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in ConfigFile.model_fields:
        value = getattr(parsed, name)
        if name == "alerts":
            for sub in Alerts.model_fields:
                values[f"alerts.{sub}"] = getattr(value, sub)
                sources[f"alerts.{sub}"] = "file" if f"alerts.{sub}" in keys else "default"
            continue
        values[name] = value
        sources[name] = "file" if name in keys else "default"
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


def apply_environment(settings: Settings) -> None:
    """Hand the file's rp1 paths to the readers that take them from the environment (flags still win there)."""
    if settings.sources.get("rp1_db") == "file" and settings.rp1_db:
        os.environ[ENV_KEYS["rp1_db"]] = str(Path(settings.rp1_db).expanduser())
    if settings.sources.get("rp1_plugin_roots") == "file" and settings.rp1_plugin_roots is not None:
        os.environ[ENV_KEYS["rp1_plugin_roots"]] = os.pathsep.join(
            str(Path(p).expanduser()) for p in settings.rp1_plugin_roots)
