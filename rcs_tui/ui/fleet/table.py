"""The fleet table's columns, which of them fit a width, and each row's cells as styled text."""

from __future__ import annotations

from rich.text import Text

from rcs_tui.fleet.rows import Row
from rcs_tui.views.text import clip

# (key, label, minimum terminal width to show it) — least important columns go first as the width shrinks.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("state", "", 0), ("project", "PROJECT", 0), ("host", "HOST", 70), ("active", "ACTIVE SET", 0),
    ("health", "HEALTH", 110), ("doctor", "DOC", 60), ("workers", "WORKERS", 80), ("tasks", "TASKS", 130),
    ("rp1", "RP1 W/F/R", 80), ("activity", "LAST", 60),
)
STATE_STYLE = {"waiting": ("◆ wait", "bold magenta"), "failed": ("✖ fail", "bold red"),
               "trouble": ("▲ attn", "bold yellow"), "running": ("● run", "green"), "idle": ("· idle", "dim"),
               "error": ("⚠ n/a", "bold red"), "…": ("… ", "dim")}


SHORT_LABELS = {"workers": "WRK", "rp1": "RP1", "active": "ACTIVE"}


def columns_for(width: int) -> list[tuple[str, str]]:
    """The columns that fit `width`, with shorter headers below 100 columns (the help explains them)."""
    short = width < 100
    return [(key, SHORT_LABELS.get(key, label) if short else label) for key, label, minimum in COLUMNS
            if width >= minimum]


def active_room(plain: list[dict[str, str]], keys: list[str], width: int) -> int:
    """Width left for ACTIVE SET (where a row's error also goes) once the other columns have what they show.

    `plain` is every visible row's `Row.cells`, computed once per redraw."""
    used = 0
    labels = dict(columns_for(width))
    for key in keys:
        if key == "active":
            continue
        label = labels.get(key, "")
        longest = max((len(c[key]) for c in plain), default=0) if key != "state" else 6
        used += min(max(len(label), longest), 30 if key != "project" else 24) + 2
    return max(16, width - used - 4)


def row_cells(row: Row, cells: dict[str, str], keys: list[str], room: int) -> list[Text]:
    """The styled cells of one row from its plain `Row.cells`."""
    state = "…" if row.doc is None and not row.error else row.rank_name
    label, style = STATE_STYLE.get(state, (state, ""))
    out = []
    for key in keys:
        if key == "state":
            out.append(Text(label, style=style))
        elif key == "active":
            text = cells["active"]
            if row.readonly_reason and row.doc is not None:
                text = f"[read-only] {text}"
            out.append(Text(clip(text, room), style="red" if row.doc is None or row.error else ""))
        elif key == "project":
            out.append(Text(clip(cells["project"], 24), style="bold"))
        elif key == "doctor":
            out.append(Text(cells["doctor"], style="yellow" if cells["doctor"] not in ("", "—") else "dim"))
        elif key == "workers":
            dead = "✝" in cells["workers"] and not cells["workers"].endswith(" 0✝")
            out.append(Text(cells["workers"], style="red" if dead else ""))
        elif key == "rp1":
            out.append(Text(cells["rp1"], style="magenta" if cells["rp1"][:1] not in ("", "0") else ""))
        else:
            out.append(Text(clip(cells[key], 30)))
    return out
