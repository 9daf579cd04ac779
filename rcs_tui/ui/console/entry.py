"""One journal entry: who did what and why, and each file before → after, with undo/redo from here.

The journal keeps every file's before-image and the digest of what was written. The after-image is the
file itself while it still has that digest, else the before-image a later entry recorded with that digest
(an undo records exactly the bytes it replaced); when neither holds the bytes, the view says so.
"""

from __future__ import annotations

import base64
import difflib
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.core.history import undone_ids
from rcs_tui.files.io import digest, file_digest, read_bounded
from rcs_tui.state.journal import interrupted, read_journal
from rcs_tui.state.txn import JOURNAL_REL
from rcs_tui.ui.console.background import off_thread
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import plain
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.views.text import strip_controls

DIFF_LINES = 60


def _decode(encoded: object) -> bytes | None:
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError):
        return None


def after_bytes(root: Path, entries: list[dict[str, Any]], item: dict[str, Any]) -> tuple[bytes | None, str]:
    """The bytes the entry wrote to `item`'s file and where they were found ("deleted" when it removed it)."""
    sha = item.get("after_sha")
    if sha is None:
        return None, "deleted"
    path = root / str(item.get("path"))
    if file_digest(path) == sha:
        got = read_bounded(path, follow_links=False)
        if got.raw is not None:
            return got.raw, "the file now"
    for e in entries:
        for f in e.get("files") or []:
            if isinstance(f, dict) and f.get("path") == item.get("path"):
                data = _decode(f.get("before_b64"))
                if data is not None and digest(data) == sha:
                    return data, f"recorded by {e['id']}"
    return None, "not recorded: the file changed since and no later entry kept these bytes"


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return strip_controls(data.decode("utf-8", "replace"), keep_newlines=True).splitlines()


def entry_text(root: Path, entry_id: str) -> Text:
    entries = read_journal(root)
    entry = next((e for e in entries if e["id"] == entry_id), None)
    out = Text()
    if entry is None:
        return Text(f"No journal entry {entry_id} any more.", style="yellow")
    undone = undone_ids(entries)
    state = ("undone" if entry_id in undone else
             "INTERRUPTED" if entry_id in {e["id"] for e in interrupted(entries)} else "done")
    out.append(plain(entry.get("action")), style="bold")
    out.append(f"   {state}\n", style="dim" if state == "undone" else "bold red" if state != "done" else "green")
    for label, key in (("id", "id"), ("at", "at"), ("who", "actor")):
        out.append(f"{label:>5}  ", style="bold")
        out.append(plain(entry.get(key)) + "\n")
    summary = raw_summary if isinstance(raw_summary := entry.get("summary"), dict) else {}
    why = summary.get("reason") or summary.get("decision") or ""
    if entry.get("undoes"):
        why = f"undoes {entry['undoes']}"
    elif entry.get("redoes"):
        why = f"redoes {entry['redoes']}"
    if why:
        out.append("  why  ", style="bold")
        out.append(plain(why) + "\n")
    for later in entries:  # what became of it since: each undo and redo that names it
        for key, label in (("undoes", "undone"), ("redoes", "redone")):
            if later.get(key) == entry_id:
                out.append(f"{label:>6} ", style="bold")
                out.append(f"by {plain(later.get('id'))} at {plain(later.get('at'))}\n")
    for item in entry.get("files") or []:
        if not isinstance(item, dict):
            continue
        before = _decode(item.get("before_b64"))
        after, where = after_bytes(root, entries, item)
        out.append(f"\n{plain(item.get('path'))}\n", style="bold cyan")
        if item.get("why"):
            out.append(f"  {plain(item.get('why'))}\n", style="dim")
        out.append("  before: ", style="bold")
        out.append("(did not exist)\n" if before is None else f"{len(before)} bytes\n")
        out.append("  after:  ", style="bold")
        out.append("(deleted)\n" if where == "deleted" else f"{len(after or b'')} bytes ({where})\n"
                   if after is not None else f"({where})\n")
        diff = list(difflib.unified_diff(_lines(before), _lines(after), "before", "after", lineterm="", n=1))
        for line in diff[2:DIFF_LINES + 2]:
            style = "red" if line.startswith("-") else "green" if line.startswith("+") else "dim"
            out.append(f"  {line}\n", style=style)
        if len(diff) > DIFF_LINES + 2:
            out.append(f"  … {len(diff) - DIFF_LINES - 2} more diff lines\n", style="dim")
    for app in entry.get("appends") or []:
        if isinstance(app, dict):
            out.append(f"\nappended to {plain(app.get('path'))}\n", style="bold cyan")
            out.append(f"  + {plain(app.get('line'))}\n", style="green")
    return out


class EntryScreen(Screen):
    """A journal entry in full; `u` undoes it, `U` redoes it, `e` opens the journal, `y` copies its id."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("u", "app.undo", "Undo this"),
                Binding("U", "app.redo", "Redo this")]

    def __init__(self, entry_id: str) -> None:
        super().__init__()
        self.entry_id = entry_id
        self.answered = False

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="entry-scroll"):
            yield Static(id="entry-text")
        yield FittedFooter()

    def current_entry(self) -> str:
        return self.entry_id

    def selection(self) -> tuple[Path, str]:
        return console_app(self).root / JOURNAL_REL, self.entry_id

    def show(self, world: object, now: float) -> None:
        """Read the entry (the whole journal) in a worker, then draw it."""
        root, entry_id = console_app(self).root, self.entry_id
        text = self.query_one("#entry-text", Static)
        if not self.answered:
            text.update(Text("reading the journal…", style="dim"))
        off_thread(self, lambda: entry_text(root, entry_id), self._draw, group="entry")

    def _draw(self, text: Text, _: BaseException | None) -> None:
        self.answered = True
        self.query_one("#entry-text", Static).update(text)
