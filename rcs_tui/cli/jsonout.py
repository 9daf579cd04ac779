"""What commands print: JSON text made inert on a terminal, sanitised human text, and the error line.
No click here: the quick commands (`rcs_tui.cli.quick`) print through it too."""

from __future__ import annotations

import sys

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import ERROR
from rcs_tui.views.json_text import escape_controls, json_text
from rcs_tui.views.text import sanitize, strip_controls

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `hud --once` does not import typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def dumps(data: object, indent: int | None = 2, *, sanitized: bool = False) -> str:
    """Strict JSON (never NaN/Infinity) with every string and key through the one sanitiser.

    Strings keep newlines and tabs (JSON escapes them) but lose escape sequences, other controls, bidi
    overrides and zero-width characters; undecodable name bytes become `\\xNN` text, so the output is always
    valid UTF-8. DEL and C1 controls that remain are written as \\u escapes: `json.dumps` emits them raw and
    some terminals act on them. Outside strings JSON is ASCII, so that substitution only touches string content.
    `sanitized=True`: `data` already went through `sanitize(..., keep_newlines=True)` (a stored answer), so
    that walk is not repeated.
    """
    return json_text(data if sanitized else sanitize(data, keep_newlines=True), indent)


def write_json(data: object) -> None:
    """Print `dumps(data)` and a newline on stdout, written out as it is encoded (the same bytes:
    `rcs_tui.views.json_stream`), so a large document (a snapshot of 10 000 sessions is ~35 MB) is held
    neither twice nor as text. Nothing when stdout was closed before we started."""
    stream = sys.stdout
    if stream is None:
        return
    from rcs_tui.views.json_stream import write

    write(data, stream, escape_controls)
    stream.flush()


def write_line(text: str, *, err: bool = False) -> None:
    """Print one line (and flush) on stdout or stderr; nothing when that stream was closed before we
    started (`cmd >&-`: Python then has no stream at all), as `click.echo` does."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    stream.write(text + "\n")
    stream.flush()


def write_bytes(data: bytes) -> None:
    """Print one line of UTF-8 `data` on stdout (and flush), as `write_line` prints text; nothing when
    stdout was closed before we started."""
    stream = sys.stdout
    if stream is None:
        return
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text-only stream (a caller's StringIO)
        stream.write(data.decode("utf-8") + "\n")
    else:
        buffer.write(data)
        buffer.write(b"\n")
        buffer.flush()
    stream.flush()


def fail(message: str, code: int = ERROR, kind: str = kinds.ERROR) -> int:
    """Print `{"error": message, "kind": kind}` on stderr and return the exit status to use.

    `error` is for people; `kind` (`rcs_tui.core.error_kinds`) and the exit status are what other processes
    decide on."""
    write_line(dumps({"error": strip_controls(message), "kind": kind}, indent=None), err=True)
    return code


def echo_text(text: str) -> None:
    """Print human-readable text through the one sanitiser (newlines kept, nothing else raw)."""
    write_line(strip_controls(text, keep_newlines=True))


def emit(data: Any, as_json: bool, human: Callable[[Any], str] | None = None) -> None:
    """Print `data` as JSON (stable contract) or through `human` for people.

    `human` gets the data with every string sanitised to one line, so a name holding a newline or an
    escape sequence cannot forge or colour a line of the report.
    """
    if as_json or human is None:
        write_json(data)
    else:
        echo_text(human(sanitize(data)))
