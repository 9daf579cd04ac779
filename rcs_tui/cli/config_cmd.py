"""`rcs-tui config`: the effective settings and where each one came from (default, file, env, flag)."""

from __future__ import annotations

from typing import Any

import click

from rcs_tui.cli.common import emit, given_root, json_option, settings


@click.command("config")
@json_option
def config_cmd(as_json: bool) -> None:
    """Print the effective settings: config file, environment and defaults, each with its source.

    The rp1 database and plugin roots also show what the readers use when nothing sets them (`effective`),
    as `rcs-tui locate` does.
    """
    from rcs_tui.cli.rp1_report import project_root
    from rcs_tui.config.settings import effective_rp1

    conf = settings()
    data = conf.as_json()
    for key, effective in effective_rp1(conf, project_root(given_root(None))).items():
        data["settings"][key]["effective"] = effective
    emit(data, as_json, _human)


def _shown(value: Any) -> str:
    if value is None or value == []:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def _human(data: dict[str, Any]) -> str:
    state = "" if data["exists"] else "  (not found: defaults apply)"
    lines = [f"config file: {data['path']}{state}"]
    width = max(len(k) for k in data["settings"])
    for key, item in data["settings"].items():
        effective = item.get("effective")
        if isinstance(effective, dict):
            lines.append(f"{key:{width}}  {effective['path']}  [{effective['source']}]")
        elif isinstance(effective, list):
            for n, root in enumerate(effective):
                lines.append(f"{key if n == 0 else '':{width}}  {root['path']}  [{root['source']}]")
        else:
            lines.append(f"{key:{width}}  {_shown(item['value'])}  [{item['source']}]")
    return "\n".join(lines)
