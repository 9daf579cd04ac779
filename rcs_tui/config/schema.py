"""What the user's configuration file may hold, checked key by key.

Every key is checked: an unknown key or a bad value is an error that names the file, the key and what is
allowed. The defaults come from `settings.DEFAULTS`, which a command without a configuration file uses
without loading this module (building these models costs a console about a quarter of a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rcs_tui.config.paths import QUICK_KEYS, parse_toml, read_config_bytes, remember_checked
from rcs_tui.config.settings import DEFAULTS, ConfigError
from rcs_tui.core.alert_rules import CHANNELS, parse_quiet_hours
from rcs_tui.core.attention import ALERT_KINDS

AlertKind = Literal[ALERT_KINDS]  # type: ignore[valid-type]
Seconds = Annotated[float, Field(ge=0, le=86400)]


def _quiet(value: str | None) -> str | None:
    parse_quiet_hours(value)  # ValueError names what is wrong
    return value


class ChannelRules(BaseModel):
    """`[alerts.channel.<name>]`: one channel's own rules, over the `[alerts]` ones."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[AlertKind] | None = Field(None, description="which kinds this channel carries")
    hold: dict[AlertKind, Seconds] | None = Field(None, description="seconds a kind must last before it alerts")
    cooldown: Seconds | None = Field(None, description="seconds between two alerts about one member")
    dedupe: Seconds | None = Field(None, description="seconds the same member in the same state is not sent again")
    quiet_hours: str | None = Field(None, description="HH:MM-HH:MM local time: listed, not sent")
    min_interval: Seconds | None = Field(None, description="seconds between two messages about one project")

    _check_quiet = field_validator("quiet_hours")(classmethod(lambda cls, v: _quiet(v)))


class Alerts(BaseModel):
    """`[alerts]`: what happens when a project starts needing the operator."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(DEFAULTS["alerts.command"],
                                description="shell command run with RCS_ALERT_* in its environment")
    bell: bool = Field(DEFAULTS["alerts.bell"], description="ring the terminal bell")
    tmux: bool = Field(DEFAULTS["alerts.tmux"], description="tmux display-message when inside tmux")
    kinds: list[Literal[ALERT_KINDS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(DEFAULTS["alerts.kinds"]), description="which transitions alert")
    min_interval: float = Field(DEFAULTS["alerts.min_interval"], ge=0, le=86400,
                                description="seconds between two alerts for one project")
    desktop: bool = Field(DEFAULTS["alerts.desktop"], description="desktop notifications (notify-send, osascript)")
    apprise: list[str] = Field(default_factory=lambda: list(DEFAULTS["alerts.apprise"]),
                               description="apprise service URLs (ntfy://…, json://…, slack://…, mailto://…)")
    hold: dict[AlertKind, Seconds] = Field(default_factory=lambda: dict(DEFAULTS["alerts.hold"]),
                                           description="seconds a kind must last before it alerts")
    cooldown: Seconds = Field(DEFAULTS["alerts.cooldown"], description="seconds between two alerts about one member")
    dedupe: Seconds = Field(DEFAULTS["alerts.dedupe"],
                            description="seconds the same member in the same state is not sent again")
    quiet_hours: str | None = Field(DEFAULTS["alerts.quiet_hours"],
                                    description="HH:MM-HH:MM local time: alerts are listed, not sent")
    grace: Seconds = Field(DEFAULTS["alerts.grace"], description="seconds after start whose news is the baseline")
    retries: int = Field(DEFAULTS["alerts.retries"], ge=0, le=10, description="retries of a failed delivery")
    channel: dict[Literal[CHANNELS], ChannelRules] = Field(  # type: ignore[valid-type]
        default_factory=dict, description="per channel (command, bell, tmux, desktop, apprise): its own rules")

    _check_quiet = field_validator("quiet_hours")(classmethod(lambda cls, v: _quiet(v)))

    @field_validator("apprise")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        if any("://" not in v or any(c in v for c in "\n\r\0") for v in value):
            raise ValueError("each entry must be a service URL (scheme://…)")
        return value


class Serve(BaseModel):
    """`[serve]`: the browser view (`rcs-tui serve`)."""

    model_config = ConfigDict(extra="forbid")

    token: str | None = Field(DEFAULTS["serve.token"], min_length=32, max_length=256, pattern=r"^[A-Za-z0-9_-]+$",
                              description="the secret a browser must present: 32 to 256 of A-Z a-z 0-9 _ -; "
                                          "else a new one is made at each start")


class ConfigFile(BaseModel):
    """Everything `config.toml` may hold (nothing else: extra keys are errors)."""

    model_config = ConfigDict(extra="forbid")

    theme: str | None = Field(DEFAULTS["theme"], description="Textual theme name (e.g. textual-dark, nord)")
    hud_preset: Literal["minimal", "focused", "full"] | None = Field(
        DEFAULTS["hud_preset"], description="HUD preset; else .rcs/hud-config.json's")
    rp1_db: str | None = Field(DEFAULTS["rp1_db"], description="rp1 database path")
    rp1_plugin_roots: list[str] | None = Field(DEFAULTS["rp1_plugin_roots"],
                                               description="where rp1 state machines are looked up")
    readonly: bool = Field(DEFAULTS["readonly"], description="start the console without actions that write")
    watch_seconds: float = Field(DEFAULTS["watch_seconds"], ge=0, le=3600,
                                 description="after a clear, how long to watch for a comeback")
    projects: list[str] = Field(default_factory=lambda: list(DEFAULTS["projects"]),
                                description="fleet projects: paths, globs, ssh:// URLs")
    alerts: Alerts = Field(default_factory=Alerts)
    serve: Serve = Field(default_factory=Serve)

    @field_validator("projects", "rp1_plugin_roots")
    @classmethod
    def _no_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not v.strip() for v in value):
            raise ValueError("entries must be non-empty strings")
        return value

    @field_validator("rp1_db", "rp1_plugin_roots", "projects")
    @classmethod
    def _no_nul(cls, value: str | list[str] | None) -> str | list[str] | None:
        """A path holding a NUL character names no file and cannot be handed on in the environment."""
        if any("\0" in v for v in ([value] if isinstance(value, str) else value or [])):
            raise ValueError("paths cannot contain a NUL character")
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
        data = parse_toml(raw)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        parsed = ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(path, exc)) from None
    keys = set(data)
    remember_checked(raw, {k: getattr(parsed, k) for k in QUICK_KEYS if k in keys})
    for table in ("alerts", "serve"):
        if isinstance(data.get(table), dict):
            keys |= {f"{table}.{k}" for k in data[table]}
    return parsed, keys
