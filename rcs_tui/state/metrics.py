"""`.rcs/metrics.json`, a session's `hud-state.json` and `.rcs/hud-config.json`.

Plain dataclasses and hand-checked types, no pydantic: this sits on the `hud --once` path, which must
start in well under 120 ms. Every reader returns a value plus an error string; nothing raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rcs_tui.core.values import number
from rcs_tui.files.io import read_json

PRESETS: tuple[str, ...] = ("minimal", "focused", "full")
DEFAULT_PRESET = "focused"

# Which HUD elements each preset shows, as the runtime's own presets do (minimal: modes + turns;
# focused: + tokens, quota, session age, last activity; full: + lifetime turns).
PRESET_ELEMENTS: dict[str, frozenset[str]] = {
    "minimal": frozenset({"members", "errors", "turns"}),
    "focused": frozenset({"members", "errors", "outcomes", "task", "rp1", "turns", "tokens", "quota",
                          "session", "last", "age"}),
    "full": frozenset({"members", "errors", "outcomes", "task", "rp1", "turns", "tokens", "quota", "session",
                       "last", "age", "total_turns"}),
}


def _num(value: Any) -> float | None:
    return number(value)


def _int(value: Any) -> int | None:
    n = _num(value)
    return int(n) if n is not None else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def parse_time(value: Any) -> float | None:
    """An ISO-8601 timestamp (`Z` or offset) as epoch seconds; None when absent or unparsable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    return dt.timestamp()


@dataclass(frozen=True)
class Metrics:
    """The fields of `metrics.json` the HUD shows (unknown ones are ignored, never rewritten)."""

    session_turns: int | None = None
    total_turns: int | None = None
    total_tokens: int | None = None
    five_hour_pct: float | None = None
    weekly_pct: float | None = None
    last_activity: float | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Metrics:
        total = _int(data.get("session_total_tokens"))
        if total is None:
            parts = [_int(data.get("session_input_tokens")), _int(data.get("session_output_tokens"))]
            if any(p is not None for p in parts):
                total = sum(p or 0 for p in parts)
        return cls(_int(data.get("session_turns")), _int(data.get("total_turns")), total,
                   _num(data.get("five_hour_limit_pct")), _num(data.get("weekly_limit_pct")),
                   parse_time(data.get("last_activity")))

    def current_for(self, session_started: float | None) -> bool:
        """The runtime hides session metrics whose last activity predates the current session."""
        if session_started is None or self.last_activity is None:
            return True
        return self.last_activity >= session_started


@dataclass(frozen=True)
class HudState:
    """A session's `hud-state.json`: per-turn data written by the notify hook."""

    last_turn_at: float | None = None
    turn_count: int | None = None
    last_agent_output: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> HudState | None:
        if not isinstance(data, dict):
            return None
        return cls(parse_time(data.get("last_turn_at")), _int(data.get("turn_count")),
                   _str(data.get("last_agent_output")))


@dataclass(frozen=True)
class HudConfig:
    """`.rcs/hud-config.json`: `{"preset": "minimal|focused|full", ...}`; an unknown preset falls back."""

    preset: str = DEFAULT_PRESET
    note: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HudConfig:
        preset = data.get("preset")
        if preset is None:
            return cls()
        if isinstance(preset, str) and preset in PRESETS:
            return cls(preset)
        shown = preset[:40] if isinstance(preset, str) else type(preset).__name__
        return cls(DEFAULT_PRESET, f"unknown preset {shown!r}; using {DEFAULT_PRESET}")


def read_metrics(path: Path, within: Path | None = None) -> tuple[Metrics | None, str | None]:
    """Metrics or None when the file is absent; an error string when it cannot be used."""
    read = read_json(path, within=within)
    if not read.exists:
        return None, None
    if read.error:
        return None, read.error
    return Metrics.from_json(read.data), None


def read_hud_config(path: Path, within: Path | None = None) -> tuple[HudConfig, str | None]:
    read = read_json(path, within=within)
    if not read.exists:
        return HudConfig(), None
    if read.error:
        return HudConfig(), read.error
    config = HudConfig.from_json(read.data)
    return config, config.note


def resolve_preset(flag: str | None, config: HudConfig) -> str:
    """`--preset` wins over `hud-config.json`, which wins over the default (`focused`)."""
    return flag if flag in PRESETS else config.preset
