"""Where this user last looked at a project's history: the "while you were away" summary starts there.

Kept per user in rcs-tui's own state directory (`$XDG_STATE_HOME/rcs-tui/history-seen.json`, else
`~/.local/state/rcs-tui/`), never in the project: another user looking at the same project has their own.
A file that is not ours, does not parse or is missing means "never looked". Bounded: the newest
`KEEP_PROJECTS` projects are kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rcs_tui.files.cache import read_own, state_dir, write_own

KEEP_PROJECTS = 200




def seen_file() -> str:
    return os.path.join(state_dir(), "history-seen.json")


def _load() -> dict[str, float]:
    raw = read_own(seen_file(), 1 << 20)
    try:
        data = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, (int, float))
            and not isinstance(v, bool)}


def last_seen(root: Path) -> float | None:
    """When this user last looked at `root`'s history (epoch seconds), None if never."""
    return _load().get(str(Path(root).resolve()))


def mark_seen(root: Path, ts: float) -> bool:
    """Remember that this user has seen `root`'s history up to `ts`; False when it could not be written."""
    data = _load()
    data[str(Path(root).resolve())] = float(ts)
    newest = dict(sorted(data.items(), key=lambda kv: kv[1])[-KEEP_PROJECTS:])
    return write_own(seen_file(), json.dumps(newest, allow_nan=False).encode())
