"""`rcs-tui config`: the effective settings and where each one came from (default, file, env, flag)."""

from __future__ import annotations

from typing import Any

import click

from rcs_tui.cli.common import emit, json_option, settings


@click.command("config")
@json_option
def config_cmd(as_json: bool) -> None:
    """Print the effective settings: config file, environment and defaults, each with its source."""
    emit(settings().as_json(), as_json, _human)


def _human(data: dict[str, Any]) -> str:
    state = "" if data["exists"] else "  (not found: defaults apply)"
    lines = [f"config file: {data['path']}{state}"]
    width = max(len(k) for k in data["settings"])
    for key, item in data["settings"].items():
        value = item["value"]
        shown = "(none)" if value is None or value == [] else ", ".join(map(str, value)) if isinstance(
            value, list) else str(value).lower() if isinstance(value, bool) else str(value)
        lines.append(f"{key:{width}}  {shown}  [{item['source']}]")
    return "\n".join(lines)
