"""`rcs-tui` commands as forks of one process that has already started and imported rcs-tui.

A fresh `rcs-tui` spends most of its run starting the interpreter and importing modules, before any file
is touched; a test that kills commands at random moments many times pays that on every run. This
process imports the CLI and every module of rcs-tui once (imports read and write no state file) and then,
per request, forks a child that runs `rcs_tui.cli.main` with the given arguments: the same code on the
same files, from the moment the command's own work begins.

Protocol, one line each way (stdin / stdout):
  -> JSON [argv, stderr_path]   <- child pid            (the child runs at once; stdout goes nowhere)
  -> "wait"                     <- its return code      (negative: the signal that ended it)
The child is reaped only on "wait", so its pid cannot be reused before the caller is done killing it.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import traceback

import rcs_tui
from rcs_tui.cli import main

for _mod in pkgutil.walk_packages(rcs_tui.__path__, "rcs_tui."):
    if not _mod.name.startswith(("rcs_tui.ui", "rcs_tui.__main__")):
        importlib.import_module(_mod.name)


def run_child(argv: list[str], stderr_path: str) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(err, 2)
    sys.argv = ["rcs-tui", *argv]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported on stderr, as an exec'd interpreter would
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve() -> None:
    for line in sys.stdin:
        argv, stderr_path = json.loads(line)
        pid = os.fork()
        if pid == 0:
            run_child(argv, stderr_path)
        print(pid, flush=True)
        assert sys.stdin.readline().strip() == "wait"
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    serve()
