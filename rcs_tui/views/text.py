"""Untrusted text from state files made inert: control sequences stripped, Rich markup escaped."""

from __future__ import annotations

import re

from rcs_tui.views.line_fit import ago

__all__ = ["ago", "clip", "escape_markup", "safe", "strip_controls"]

# CSI, OSC (terminated by BEL or ST), other ESC sequences, then remaining C0/C1 controls except tab.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL | ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"   # DCS/SOS/PM/APC strings
    r"|\x1b[@-Z\\-_]"                   # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"           # 8-bit CSI
    r"|\x9d[^\x07\x9c]*(?:\x07|\x9c)?"  # 8-bit OSC
)
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def strip_controls(value: object, *, keep_newlines: bool = False) -> str:
    """Plain printable text: escape sequences removed, other control characters dropped."""
    text = value if isinstance(value, str) else str(value)
    text = _ANSI.sub("", text)
    if keep_newlines:
        return "\n".join(_CONTROLS.sub("", line) for line in text.split("\n"))
    return _CONTROLS.sub(" " if "\n" in text else "", text.replace("\n", " "))


def escape_markup(text: str) -> str:
    """Escape Rich/Textual markup so `[bold]` and `[link=…]` render literally (no Rich import)."""
    return re.sub(r"(\\*)(\[[a-zA-Z@/#$:.\-!~=])", lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def safe(value: object, *, keep_newlines: bool = False) -> str:
    """Untrusted string → text safe to embed in markup."""
    return escape_markup(strip_controls(value, keep_newlines=keep_newlines))


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """Cut plain text to `width` cells (plain text only: sanitize before, style after)."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: max(0, width - len(ellipsis))] + ellipsis[:width]


def duration(seconds: float | None) -> str:
    """A step's duration as the console shows it: `14.0s`, `3m07s`; empty when unknown."""
    if seconds is None:
        return ""
    return f"{seconds:.1f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
