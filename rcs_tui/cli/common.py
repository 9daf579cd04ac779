"""Shared CLI plumbing: --root/--json options, JSON output, and the error contract."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rcs_tui.cli.jsonout import dumps, fail
from rcs_tui.views.text import sanitize, strip_controls

__all__ = ["CliError", "dumps", "emit", "expect_plan_option", "fail", "json_option", "resolve_root", "root_option",
           "run"]


class CliError(Exception):
    """An error reported as `{"error": msg}` on stderr with exit status 1."""


def root_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--root", "root", type=click.Path(file_okay=False), default=None,
                        help="Project root (else RCS_ROOT, else nearest ancestor holding .rcs/).")(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(func)


def expect_plan_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--expect-plan", "expect_plan", default=None, metavar="FINGERPRINT",
                        help="Apply only if the plan made now has this fingerprint (the `plan_fingerprint` of "
                             "the --dry-run you confirmed); otherwise write nothing and exit 1.")(func)


def given_root(root: str | None) -> str | None:
    """`--root` of the subcommand, else the one given before it (`rcs-tui --root X state …`)."""
    if root is not None:
        return root
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("rcs_root") if ctx is not None else None


def resolve_root(root: str | None) -> Path:
    from rcs_tui.state.layout import RootNotFound, find_root

    root = given_root(root)
    try:
        return find_root(root)
    except RootNotFound as exc:
        raise CliError(str(exc)) from exc


def echo_text(text: str) -> None:
    """Print human-readable text through the one sanitiser (newlines kept, nothing else raw)."""
    click.echo(strip_controls(text, keep_newlines=True))


def emit(data: Any, as_json: bool, human: Callable[[Any], str] | None = None) -> None:
    """Print `data` as JSON (stable contract) or through `human` for people.

    `human` gets the data with every string sanitised to one line, so a name holding a newline or an
    escape sequence cannot forge or colour a line of the report.
    """
    if as_json or human is None:
        click.echo(dumps(data))
    else:
        echo_text(human(sanitize(data)))


def settings(**flags: Any) -> Any:
    """The effective configuration (file, environment, then these flags; None means "not given").

    A bad file is a CliError naming the file, the key and what is allowed.
    """
    from rcs_tui.config.settings import ConfigError, load_settings

    try:
        return load_settings(flags)
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def known_errors() -> tuple[type[BaseException], ...]:
    """Exception types whose message is already meant for the operator."""
    from rcs_tui.core.modes import BadName
    from rcs_tui.state.txn import TxnError

    return (CliError, BadName, TxnError)


def run(group: click.Group, argv: list[str] | None) -> int:
    """Invoke the group; map usage errors to exit 2 and operator errors to exit 1, never a traceback."""
    from rcs_tui.config.paths import config_absent, config_path

    if not config_absent(config_path()):  # without a file there is nothing to hand on: skip loading the schema
        from rcs_tui.config.settings import apply_environment

        try:
            apply_environment(settings())
        except CliError as exc:
            return fail(str(exc), 1)
    try:
        rv = group.main(args=argv, prog_name="rcs-tui", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        return fail("aborted", 1)
    except click.UsageError as exc:
        # The usage line first, so a person sees how to call it; the JSON stays last.
        if exc.ctx is not None:
            sys.stderr.write(f"{exc.ctx.get_usage()}\nTry '{exc.ctx.command_path} --help' for help.\n")
        else:  # raised by the parser before a context existed: the command line as typed says which command
            sys.stderr.write("Usage: rcs-tui [OPTIONS] COMMAND [ARGS]...\nTry 'rcs-tui COMMAND --help' for help.\n")
        return fail(exc.format_message(), 2)
    except click.ClickException as exc:
        return fail(exc.format_message(), exc.exit_code or 1)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file-system failure outside a transaction (which explains its own)
        from rcs_tui.state.txn import explain

        return fail(explain(exc), 1)
    except Exception as exc:  # noqa: BLE001 - the contract is: never a traceback
        if isinstance(exc, known_errors()):
            return fail(str(exc), 1)
        return fail(f"internal error: {type(exc).__name__}: {exc}", 1)
    return rv if isinstance(rv, int) else 0


