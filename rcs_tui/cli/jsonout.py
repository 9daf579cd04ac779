"""JSON text for output, made inert on a terminal; the error line every command prints. No click here."""

from __future__ import annotations

import json
import re
import sys

from rcs_tui.views.text import sanitize, strip_controls

_C1 = re.compile("[\x7f-\x9f]")


def dumps(data: object, indent: int | None = 2, *, sanitized: bool = False) -> str:
    """Strict JSON (never NaN/Infinity) with every string and key through the one sanitiser.

    Strings keep newlines and tabs (JSON escapes them) but lose escape sequences, other controls, bidi
    overrides and zero-width characters; undecodable name bytes become `\\xNN` text, so the output is always
    valid UTF-8. DEL and C1 controls that remain are written as \\u escapes: `json.dumps` emits them raw and
    some terminals act on them. Outside strings JSON is ASCII, so that substitution only touches string content.
    `sanitized=True`: `data` already went through `sanitize(..., keep_newlines=True)` (a stored answer), so
    that walk is not repeated.
    """
    clean = data if sanitized else sanitize(data, keep_newlines=True)
    text = json.dumps(clean, indent=indent, ensure_ascii=False, allow_nan=False)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def fail(message: str, code: int = 1) -> int:
    """Print `{"error": message}` on stderr and return the exit status to use."""
    sys.stderr.write(dumps({"error": strip_controls(message)}, indent=None) + "\n")
    return code
