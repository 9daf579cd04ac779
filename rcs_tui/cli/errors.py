"""The error contract every command keeps, with or without click: `{"error": ...}` on stderr, never a
traceback. No click here: the quick commands (`rcs_tui.cli.quick`) use it too."""

from __future__ import annotations

from rcs_tui.cli.jsonout import fail, write_line


class CliError(Exception):
    """An error reported as `{"error": msg}` on stderr with exit status 1."""


def known_errors() -> tuple[type[BaseException], ...]:
    """Exception types whose message is already meant for the operator."""
    from rcs_tui.core.modes import BadName
    from rcs_tui.files.host import RootNotFound
    from rcs_tui.state.txn import TxnError

    return (CliError, BadName, TxnError, RootNotFound)


def exit_status(exc: BaseException) -> int:
    """The exit status for an exception that escaped a command, after printing what the operator should
    read; the same as click ends its commands with, so a command answers alike on either path: Ctrl-C is
    a new line and `{"error": "aborted"}`, a reader of our output that went away is a silent 1, anything
    else 1 with its error line. A file-system failure is explained; an unexpected one is still one JSON
    line, never a traceback."""
    if isinstance(exc, KeyboardInterrupt):
        write_line("", err=True)
        return fail("aborted", 1)
    if isinstance(exc, BrokenPipeError):
        return 1
    if isinstance(exc, known_errors()):
        return fail(str(exc), 1)
    if isinstance(exc, OSError):  # a file-system failure outside a transaction (which explains its own)
        from rcs_tui.state.txn import explain

        return fail(explain(exc), 1)
    return fail(f"internal error: {type(exc).__name__}: {exc}", 1)
