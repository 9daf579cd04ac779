"""Shared CLI plumbing: --root/--json options, JSON output, and the error contract."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rcs_tui.cli.errors import CliError, command_started, exit_status, known_errors
from rcs_tui.cli.jsonout import dumps, echo_text, emit, fail
from rcs_tui.cli.quick import JSON_HELP, ROOT_HELP, Option, Quick
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import ERROR, OK, USAGE

__all__ = ["CliError", "Finite", "dumps", "echo_text", "emit", "expect_plan_option", "fail", "json_option",
           "known_errors", "readable_snapshot",
           "quick_options", "resolve_root", "root_option", "rp1_paths", "run"]


class Finite(click.FloatRange):
    """A number within bounds, as `click.FloatRange`, that is also finite: NaN passes every comparison, so a
    range alone lets `nan` through (a timeout of "nan s", every run idle)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number or number in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def root_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--root", "root", type=click.Path(file_okay=False), default=None, help=ROOT_HELP)(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help=JSON_HELP)(func)


def _click_type(option: Option) -> Any:
    if option.kind == "int":
        return click.IntRange(option.low, option.high) if option.bounded else int
    if option.kind == "choice":
        return click.Choice(list(option.choices))
    if option.kind in ("dir", "file"):
        return click.Path(file_okay=option.kind == "file", dir_okay=option.kind == "dir")
    return None


def quick_options(quick: Quick) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click options of a command the quick path also answers, built from its one declaration
    (`rcs_tui.cli.quick.Option`), listed in `--help` in the declared order."""

    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(quick.declared):
            if option.kind == "flag":
                func = click.option(*option.names, option.key, is_flag=True, help=option.help)(func)
            else:
                func = click.option(*option.names, option.key, type=_click_type(option), default=option.default,
                                    show_default=option.show_default, metavar=option.metavar,
                                    help=option.help)(func)
        return func

    return apply


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
    from rcs_tui.files.layout import RootNotFound, find_root

    root = given_root(root)
    try:
        return find_root(root)
    except RootNotFound as exc:
        raise CliError(str(exc), kinds.NO_PROJECT) from exc


def readable_snapshot(root: Path, session_id: str | None) -> Any:
    """The snapshot of the answering scopes (root and the resolved session), or a CliError naming what could
    not be read there: an answer built over an unreadable state directory or canonical set would be empty,
    and read as "nothing is active"."""
    from rcs_tui.files.io import rel_of
    from rcs_tui.state.ops import unread_scopes
    from rcs_tui.state.reader import read_snapshot

    snapshot = read_snapshot(root, session_id, all_sessions=False)
    unread = unread_scopes(snapshot)
    if unread:
        raise CliError("cannot read the state this answer is built from: " + "; ".join(
            f"{rel_of(root, e.path)}: {e.reason}" for e in unread), kinds.IO_ERROR)
    return snapshot


def settings(**flags: Any) -> Any:
    """The effective configuration (file, environment, then these flags; None means "not given").

    A bad file is a CliError naming the file, the key and what is allowed.
    """
    from rcs_tui.config.settings import ConfigError, load_settings

    try:
        return load_settings(flags)
    except ConfigError as exc:
        raise CliError(str(exc), kinds.BAD_CONFIG) from None


def rp1_paths(db: str | None = None) -> tuple[str | None, list[Path] | None]:
    """The rp1 database (`--db` given as `db`, else RP1_DB, else the file's `rp1_db`) and plugin roots
    (RP1_PLUGIN_ROOTS, else the file's), for the command to hand to the readers; None: the reader's default."""
    from rcs_tui.config.settings import rp1_paths as effective

    path, roots = effective(settings(rp1_db=db))
    return path, None if roots is None else [Path(p) for p in roots]


def run(group: click.Group, argv: list[str] | None) -> int:
    """Invoke the group; map usage errors to USAGE and operator errors to ERROR, never a traceback."""
    from rcs_tui.config.paths import config_absent, config_path

    command_started()
    if not config_absent(config_path()):  # a bad file is reported by every command; without one, skip the schema
        try:
            settings()
        except CliError as exc:
            return fail(str(exc), ERROR, kinds.kind_of(exc))
    try:
        rv = group.main(args=argv, prog_name="rcs-tui", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        return fail("aborted", ERROR, kinds.ABORTED)
    except click.UsageError as exc:
        # The usage line first, so a person sees how to call it; the JSON stays last.
        if exc.ctx is not None:
            sys.stderr.write(f"{exc.ctx.get_usage()}\nTry '{exc.ctx.command_path} --help' for help.\n")
        else:  # raised by the parser before a context existed: the command line as typed says which command
            sys.stderr.write("Usage: rcs-tui [OPTIONS] COMMAND [ARGS]...\nTry 'rcs-tui COMMAND --help' for help.\n")
        return fail(exc.format_message(), USAGE, kinds.USAGE)
    except click.FileError as exc:
        return fail(exc.format_message(), exc.exit_code or ERROR, kinds.IO_ERROR)
    except click.ClickException as exc:
        return fail(exc.format_message(), exc.exit_code or ERROR)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the contract is: never a traceback
        return exit_status(exc)
    return rv if isinstance(rv, int) else OK


