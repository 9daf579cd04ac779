"""Commands answered without click: `hud --once` and `rp1 runs`, which status lines and scripts run
many times a minute.

Importing click and building the command tree costs about a third of such a command's time.
`parse(argv)` recognises exactly the shapes declared for these commands: the command's words, then
options written `--name value`, `--name=value` or `--flag`, each one the click command defines, with a
value click would accept the same way (tests compare both on the same command lines). Anything else
(help, an option not declared, a value it would not take, an option before the command, `--`) gives
None and goes to click, which also reports every usage error. A runner may still hand over by
returning None, e.g. when a configuration file needs the validating path.
"""

from __future__ import annotations

import importlib
import os

from rcs_tui.cli.errors import command_started, exit_status

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs `hud --once` milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable


ROOT_HELP = "Project root (else RCS_ROOT, else nearest ancestor holding .rcs/)."
JSON_HELP = "Print machine-readable JSON."


class Option:
    """One option of a quick command, declared once: the click command's option is built from it
    (`rcs_tui.cli.common.quick_options`) and the quick parser reads it.

    `names` are its spellings ("--session-id" and "--session" fill one key); `kind` is "flag", "text",
    "int" (from `low`, up to `high` when given), "choice" (one of `choices`), "dir" (a path that is not a
    file) or "file" (a path that is not a directory). `bounded=False`: click takes any integer, the quick
    path only those from `low` (the rest go to click). `default` is what the keyword gets when the option
    is not given (flags: False). Plain classes, not named tuples: `hud --once` must not pay for importing
    `typing`.
    """

    __slots__ = ("names", "key", "kind", "low", "high", "choices", "default", "help", "show_default", "bounded",
                 "metavar")

    def __init__(self, names: tuple[str, ...], key: str, kind: str = "text", *, low: int = 1,
                 high: int | None = None, choices: tuple[str, ...] = (), default: object = None,
                 help: str | None = None, show_default: bool = False, bounded: bool = True,
                 metavar: str | None = None) -> None:
        self.names, self.key, self.kind, self.low, self.high, self.choices = names, key, kind, low, high, choices
        self.default = False if kind == "flag" else default
        self.help, self.show_default, self.bounded, self.metavar = help, show_default, bounded, metavar


class Quick:
    """A command answered without click: its options in the order `--help` lists them (`declared`; `options`
    maps every spelling to its option, `defaults` every key to what click gives it when not given), the
    function called with them (the exit status, or None to hand over to click), and a flag that must be
    given, if any (`hud` without `--once` is the live HUD, not a quick command)."""

    __slots__ = ("declared", "options", "defaults", "run", "required")

    def __init__(self, declared: tuple[Option, ...], run: Callable[..., int | None],
                 required: str | None = None) -> None:
        self.declared, self.run, self.required = declared, run, required
        self.options = {name: option for option in declared for name in option.names}
        self.defaults = {option.key: option.default for option in declared}


# The command's words -> "module:attribute" of its `Quick`, imported only when argv starts with them.
COMMANDS: dict[tuple[str, ...], str] = {
    ("hud",): "rcs_tui.cli:HUD_ONCE",
    ("rp1", "runs"): "rcs_tui.cli.rp1_report:QUICK",
}


def _value(option: Option, value: str) -> object | None:
    """The value as the click command would take it, or None when click should judge it."""
    if not value or value.startswith("-"):
        return None
    if option.kind == "int":
        if not value.isascii() or not value.isdigit():
            return None
        number = int(value)
        if number < option.low or (option.high is not None and number > option.high):
            return None
        return number
    if option.kind == "choice":
        return value if value in option.choices else None
    if option.kind == "dir" and os.path.isfile(value):  # click's Path(file_okay=False) refuses it
        return None
    if option.kind == "file" and os.path.isdir(value):  # and Path(dir_okay=False) this
        return None
    if option.kind in ("dir", "file") and os.path.exists(value) and not os.access(value, os.R_OK):
        return None  # and Path(readable=True) one it may not read: the same usage error either way
    return value


def parse(argv: list[str]) -> tuple[Quick, dict[str, object]] | None:
    """The quick command argv names and its keyword arguments, or None when click should take argv."""
    found = next(((w, where) for w, where in COMMANDS.items() if tuple(argv[:len(w)]) == w), None)
    if found is None:
        return None
    words, where = found
    module, attr = where.split(":")
    quick: Quick = getattr(importlib.import_module(module), attr)
    opts = dict(quick.defaults)
    rest = argv[len(words):]
    i = 0
    while i < len(rest):
        name, eq, inline = rest[i].partition("=")
        option = quick.options.get(name)
        if option is None:
            return None
        if option.kind == "flag":
            if eq:
                return None
            opts[option.key], i = True, i + 1
            continue
        if eq:
            raw, i = inline, i + 1
        elif i + 1 < len(rest):
            raw, i = rest[i + 1], i + 2
        else:
            return None
        value = _value(option, raw)
        if value is None:
            return None
        opts[option.key] = value
    if quick.required is not None and not opts.pop(quick.required):
        return None
    return quick, opts


def run_quick(argv: list[str]) -> int | None:
    """Answer argv without click when it is a quick command: its exit status, else None (use click).

    The error contract is click's: `{"error": ...}` on stderr with status 1, never a traceback.
    """
    found = parse(argv)
    if found is None:
        return None
    quick, opts = found
    command_started()
    try:
        return quick.run(**opts)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the contract is: never a traceback
        return exit_status(exc)
