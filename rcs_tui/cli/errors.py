"""The error contract every command keeps, with or without click: `{"error": ..., "kind": ...}` on stderr
and a named exit status (`rcs_tui.core.exit_codes`), never a traceback. The kind is chosen where the error
is raised: each exception class carries its own (`error_kind`, see `rcs_tui.core.error_kinds`). No click
here: the quick commands (`rcs_tui.cli.quick`) use it too."""

from __future__ import annotations

import sys

from rcs_tui.cli.jsonout import fail, write_line
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import ERROR, USAGE


class CliError(Exception):
    """An error reported as `{"error": msg, "kind": kind}` on stderr with exit status ERROR."""

    error_kind = kinds.ERROR

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.error_kind = kind


def known_errors() -> tuple[type[BaseException], ...]:
    """Exception types whose message is already meant for the operator."""
    from rcs_tui.core.modes import BadName
    from rcs_tui.files.host import RootNotFound
    from rcs_tui.state.txn import TxnError

    return (CliError, BadName, TxnError, RootNotFound)


def exit_status(exc: BaseException) -> int:
    """The exit status for an exception that escaped a command, after printing what the operator should
    read; the same as click ends its commands with, so a command answers alike on either path: Ctrl-C is
    a new line and `{"error": "aborted", "kind": "aborted"}`, a reader of our output that went away is a
    silent ERROR, anything else ERROR with its error line. A file-system failure is explained; an
    unexpected one is still one JSON line, never a traceback."""
    done = _made_before()
    if isinstance(exc, KeyboardInterrupt):
        write_line("", err=True)
        return fail("aborted" + done, ERROR, kinds.ABORTED)
    if isinstance(exc, BrokenPipeError):
        return fail("the output could not be written: its reader went away" + done, ERROR, kinds.IO_ERROR) \
            if done else ERROR
    if isinstance(exc, known_errors()):
        kind = kinds.kind_of(exc)  # a bad value on the command line is a usage error wherever it is found
        return fail(str(exc) + done, USAGE if kind == kinds.USAGE else ERROR, kind)
    if isinstance(exc, OSError):  # a file-system failure outside a transaction (which explains its own)
        from rcs_tui.files.fsafe import Refused
        from rcs_tui.state.txn import explain

        return fail(explain(exc) + done, ERROR, kinds.UNSAFE_PATH if isinstance(exc, Refused) else kinds.IO_ERROR)
    return fail(f"internal error: {type(exc).__name__}: {exc}{done}", ERROR, kinds.INTERNAL)


_started_after = 0  # actions this process had applied when the running command started


def command_started() -> None:
    """Note the start of a command: only the changes it makes itself are named in its error (one process
    may run many commands: a test, a shell)."""
    global _started_after
    txn = sys.modules.get("rcs_tui.state.txn")
    _started_after = txn.commits() if txn is not None else 0


def _made_before() -> str:
    """What to add to an error that came after the command applied a change (printing its result failed,
    or a later step did): the change stands, and its journal entry says how to revert it. Empty when
    nothing was applied (the transaction module is then not even loaded)."""
    txn = sys.modules.get("rcs_tui.state.txn")
    ids = txn.committed(_started_after) if txn is not None else []
    if not ids:
        return ""
    entries = "entries " + ", ".join(ids) if len(ids) > 1 else "entry " + ids[0]
    return (f"; the change was made before this failed (journal {entries}: `rcs-tui journal` lists it, "
            f"`rcs-tui undo {ids[-1]}` reverts it)")
