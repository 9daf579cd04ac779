"""JSON text as every command prints it: strict, indented, with DEL and C1 controls written as escapes.

One function, so the status line's stored document and everything printed at the time are the same text,
and a document can be stored as text and extended at print time (`with_keys`) without being parsed again.
"""

from __future__ import annotations

import json
import re

_C1 = re.compile("[\x7f-\x9f]")


def json_text(clean: object, indent: int | None = 2) -> str:
    """`clean` (already through the sanitiser) as strict JSON (never NaN/Infinity). DEL and C1 controls that
    remain are written as \\u escapes: `json.dumps` emits them raw and some terminals act on them. Outside
    strings JSON is ASCII, so that substitution only touches string content."""
    return escape_controls(json.dumps(clean, indent=indent, ensure_ascii=False, allow_nan=False))


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_controls(text: str) -> str:
    """JSON text with DEL and C1 controls written as \\u escapes (a piece at a time is fine: they are single
    characters, never split)."""
    return _C1.sub(_escape, text)


def with_keys(text: bytes | bytearray, extra: dict[str, object]) -> bytes:
    """The UTF-8 text `json_text` gives for the object `text` holds (written with indent 2) with `extra`'s
    keys added after its own (keys it does not have yet): what `json_text({**doc, **extra})` would give,
    without parsing or decoding `text` (a stored document can be tens of megabytes)."""
    if not extra:
        return bytes(text)
    tail = json_text(extra)[2:-2].encode("utf-8")  # the members, on their own indented lines, without braces
    if text == b"{}":
        return b"{\n" + tail + b"\n}"
    if not text.endswith(b"\n}"):
        raise ValueError("not an object written with indent 2")
    return b"".join((memoryview(text)[:-2], b",\n", tail, b"\n}"))
