"""`e`: open the selected file in the operator's editor with the console suspended, then reload.

The editor is `$VISUAL`, else `$EDITOR` (split like a shell would, so `code -w` works), else `vi` when
installed. An edit made there bypasses the journal, so the console says so once the editor returns.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from textual.app import App, SuspendNotSupported


def editor_command(environ: dict[str, str] | None = None) -> list[str] | None:
    env = os.environ if environ is None else environ
    for var in ("VISUAL", "EDITOR"):
        value = env.get(var, "").strip()
        if value:
            try:
                argv = shlex.split(value)
            except ValueError:
                continue
            if argv:
                return argv
    vi = shutil.which("vi")
    return [vi] if vi else None


def edit_file(app: App, path: Path) -> tuple[bool, str]:
    """Run the editor on `path` with the app suspended; (ran, message for the operator)."""
    argv = editor_command()
    if argv is None:
        return False, "no editor: set $VISUAL or $EDITOR"
    path = path.absolute()  # a file name from the tree reaches the editor as data: never read as an option
    before = path.stat().st_mtime_ns if path.exists() else None
    try:
        try:
            with app.suspend():
                code = subprocess.run([*argv, str(path)], check=False).returncode
        except SuspendNotSupported:  # no terminal to hand over (headless): run it all the same
            code = subprocess.run([*argv, str(path)], check=False, stdin=subprocess.DEVNULL).returncode
    except OSError as exc:
        return False, f"cannot run {argv[0]}: {exc.strerror or exc}"
    after = path.stat().st_mtime_ns if path.exists() else None
    if code != 0:
        return True, f"{argv[0]} exited with status {code}"
    if after == before:
        return True, f"{path.name}: unchanged"
    return True, f"{path.name} saved outside the journal (undo cannot restore this edit)"
