"""What one journal line may be: the rules the journal reader applies, shared with the writer so that an
entry is only ever written when the reader that `undo` uses will accept it."""

from __future__ import annotations

from typing import Any

from rcs_tui.files.io import loads_strict

MAX_LINE = 64 * 1024 * 1024  # the longest line the reader reads (longer ones are skipped, so not undoable)


def entry_problem(entry: dict[str, Any]) -> str | None:
    """Why a parsed line is not a usable entry (None: it is)."""
    if not isinstance(entry.get("id"), str):
        return '"id" is not a string'
    if "action" in entry and not isinstance(entry["action"], str):
        return '"action" is not a string'
    if not isinstance(entry.get("files"), list):
        return '"files" is not a list'
    for i, item in enumerate(entry["files"]):
        if not isinstance(item, dict):
            return f"files[{i}] is not an object"
        if not isinstance(item.get("path"), str):
            return f"files[{i}].path is not a string"
        for key in ("before_b64", "after_sha"):
            if item.get(key) is not None and not isinstance(item[key], str):
                return f"files[{i}].{key} is not a string"
    appends = entry.get("appends", [])
    if not isinstance(appends, list):
        return '"appends" is not a list'
    for i, item in enumerate(appends):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not isinstance(item.get("line"), str):
            return f"appends[{i}] is not an object with a path and a line"
        size = item.get("size_before")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            return f"appends[{i}].size_before is not a non-negative integer"
    if "undoes" in entry and not isinstance(entry["undoes"], str):
        return '"undoes" is not a string'
    summary = entry.get("summary", {})
    if not isinstance(summary, dict):
        return '"summary" is not an object'
    for key in ("mode", "scope"):  # what a clear's entry names: looked up by them later (who came back)
        if summary.get(key) is not None and not isinstance(summary[key], str):
            return f"summary.{key} is not a string"
    if entry.get("state", "pending") not in ("pending", "done", "aborted"):
        return '"state" is not pending, done or aborted'
    return None


def line_problem(line: bytes) -> str | None:
    """Why the journal reader would not return this line as an entry (None: it would)."""
    if len(line) > MAX_LINE:
        return f"{len(line) / 1048576:.0f} MiB, more than the {MAX_LINE // 1048576} MiB one journal entry may hold"
    try:
        entry = loads_strict(line)
    except (ValueError, RecursionError) as exc:
        return f"not JSON the reader accepts ({str(exc)[:80]})"
    if not isinstance(entry, dict):
        return "not a JSON object"
    return entry_problem(entry)
