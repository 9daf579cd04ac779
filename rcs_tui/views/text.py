"""The one sanitiser for untrusted text (state files, journals, databases, directory names).

Every output path (plain CLI text, `--json`, the overlay that goes into AGENTS.md, the HUD line and
the TUI) passes strings through here: escape sequences (CSI, OSC 52/OSC 8, DCS, 8-bit C1), other
C0/C1 controls, bidi overrides and zero-width characters are removed, and undecodable bytes of a
file name (surrogate escapes) are shown as `\\xNN`, so output is inert on a terminal and valid UTF-8.
"""

from __future__ import annotations

import math
import re

from rcs_tui.views.line_fit import ago

__all__ = ["ago", "clip", "escape_markup", "safe", "strip_controls", "tmux_literal"]

# CSI, OSC (terminated by BEL or ST), other ESC sequences, then remaining C0/C1 controls except tab.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL | ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"   # DCS/SOS/PM/APC strings
    r"|\x1b[@-Z\\-_]"                   # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"           # 8-bit CSI
    r"|\x9d[^\x07\x9c]*(?:\x07|\x9c)?"  # 8-bit OSC
)
# Characters that reorder or hide text: bidi embeddings/overrides/isolates and marks, zero-width
# spaces and joiners, line/paragraph separators, the BOM.
_INVISIBLE = "\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_CONTROLS = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_INVISIBLE}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_INVISIBLE}\ud800-\udfff]")


def _surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def strip_controls(value: object, *, keep_newlines: bool = False) -> str:
    """Plain printable text: escape sequences removed, other control and invisible characters dropped."""
    text = value if isinstance(value, str) else str(value)
    if not _UNSAFE.search(text):  # the common case: nothing to do
        return text
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:
        text = _ANSI.sub("", text)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(_surrogate, text)
    if keep_newlines:
        return "\n".join(_CONTROLS.sub("", line) for line in text.split("\n"))
    return _CONTROLS.sub(" " if "\n" in text else "", text.replace("\n", " "))


def sanitize(data: object, *, keep_newlines: bool = False) -> object:
    """A copy of JSON-like `data` whose every string (keys too) went through `strip_controls`, and
    whose non-finite floats became None, so it can be printed as text or as strict JSON."""
    if isinstance(data, str):
        return strip_controls(data, keep_newlines=keep_newlines)
    if isinstance(data, dict):
        return {(strip_controls(k, keep_newlines=keep_newlines) if isinstance(k, str) else k):
                sanitize(v, keep_newlines=keep_newlines) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [sanitize(v, keep_newlines=keep_newlines) for v in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data


def escape_markup(text: str) -> str:
    """Escape Rich/Textual markup so `[bold]` and `[link=…]` render literally (no Rich import)."""
    return re.sub(r"(\\*)(\[[a-zA-Z@/#$:.\-!~=])", lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def tmux_literal(value: object) -> str:
    """`value` as text tmux shows as it is wherever it expands formats (messages, titles, status lines, a
    pane's start directory): controls stripped and every `#` doubled, so `#(cmd)`, `#{var}` and `#[style]`
    from a file name or a remote host are never run, read or applied."""
    return strip_controls(value).replace("#", "##")


def tmux_argument(value: object) -> str:
    """`tmux_literal(value)` as one argument of a tmux command: tmux reads an argument that ends in `;` as the
    end of its command (and `\\;` as a `;`), so a trailing `;` is written `\\;`."""
    literal = tmux_literal(value)
    return literal[:-1] + "\\;" if literal.endswith(";") else literal


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
