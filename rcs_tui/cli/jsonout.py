"""JSON text for output, made inert on a terminal; the error line every command prints. No click here."""

from __future__ import annotations

import json
import re
import sys

_C1 = re.compile("[\x7f-\x9f]")


def dumps(data: object, indent: int | None = 2) -> str:
    """JSON text with DEL and C1 controls (8-bit CSI/OSC) written as \\u escapes: same data, inert on a tty.

    `json.dumps` already escapes C0 controls such as ESC, but emits U+0080–U+009F raw, which some
    terminals act on. Outside strings JSON is pure ASCII, so the substitution only touches string content.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def fail(message: str, code: int = 1) -> int:
    """Print `{"error": message}` on stderr and return the exit status to use."""
    sys.stderr.write(dumps({"error": message}, indent=None) + "\n")
    return code
