"""Strict, sanitised JSON written out as it is encoded: the bytes `jsonout.dumps` makes (indent 2), without
holding the document twice or the text at all.

`dumps` sanitises a copy of the data (`views.text.sanitize`), encodes it with the standard library's
indenting encoder (pure Python: every piece passes up through one generator per nesting level, and the
pieces are joined into one string at the end) and escapes C1 controls in the text. Here each level of the
data is sanitised as it is reached, by the same rules (every string and string key through the one
sanitiser, keys that become equal keep the first one's place and the last one's value, non-finite floats
become null, tuples are lists), each piece is appended to a buffer once, and the buffer is escaped and
written every `CHUNK` pieces. `tests/test_json_stream.py` compares both on random and hostile data.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring

from rcs_tui.views.text import strip_controls

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the quick commands do not import typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

CHUNK = 4096  # pieces gathered before each write
INDENT = "  "


def _float(value: float) -> str:
    if not math.isfinite(value):  # only a key can still be one: `sanitize` leaves keys that are not strings
        raise ValueError("Out of range float values are not JSON compliant: " + repr(value))
    return float.__repr__(value)


def _key(key: object) -> str:
    """A key as the standard encoder writes it (before string escaping); string keys are sanitised."""
    if isinstance(key, str):
        return strip_controls(key, keep_newlines=True)
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


class Lazy:
    """A list the stream writes as its items are made: `make(item)` for each of `items` in turn, each made
    when it is reached and dropped once written, so a document of ten thousand scopes never holds them all
    as JSON values at once. Written exactly as the list of those values."""

    __slots__ = ("items", "make")

    def __init__(self, items: list[Any], make: Callable[[Any], Any]) -> None:
        self.items = items
        self.make = make

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        return map(self.make, self.items)


class Encoded:
    """A value already encoded by `encoded_at` at nesting `level` (another process may have made it): written
    as it is, so the document reads exactly as if the value itself had been written there."""

    __slots__ = ("level", "text")

    def __init__(self, text: str, level: int) -> None:
        self.text = text
        self.level = level


_CLEAN_KEYS: set[str] = set()  # text keys seen to pass the sanitiser unchanged (field names repeat)
CLEAN_KEYS_KEPT = 4096


def _all_clean(mapping: dict[Any, Any]) -> bool:
    """Are all of the mapping's keys text that the sanitiser leaves as it is? (Remembered for the next.)"""
    for key in mapping:
        if key.__class__ is not str or strip_controls(key, keep_newlines=True) != key:
            return False
        if len(_CLEAN_KEYS) < CLEAN_KEYS_KEPT:
            _CLEAN_KEYS.add(key)
    return True


class _Writer:
    def __init__(self, stream: IO[str], escape: Callable[[str], str]) -> None:
        self.stream = stream
        self.escape = escape
        self.parts: list[str] = []

    def flush(self) -> None:
        if self.parts:
            self.stream.write(self.escape("".join(self.parts)))
            self.parts.clear()

    def value(self, o: Any, level: int) -> None:
        put = self.parts.append
        if isinstance(o, str):
            put(encode_basestring(strip_controls(o, keep_newlines=True)))
        elif o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif isinstance(o, int):
            put(int.__repr__(o))
        elif isinstance(o, float):
            put(float.__repr__(o) if math.isfinite(o) else "null")
        elif isinstance(o, list | tuple | Lazy):
            self.array(o, level)
        elif isinstance(o, dict):
            self.object(o, level)
        elif isinstance(o, Encoded):
            if o.level != level:
                raise ValueError(f"a value encoded at nesting level {o.level} cannot be written at level {level}")
            put(o.text)
        else:
            raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")

    def array(self, items: list[Any] | tuple[Any, ...] | Lazy, level: int) -> None:
        put = self.parts.append
        if not items:
            put("[]")
            return
        inner = "\n" + INDENT * (level + 1)
        put("[" + inner)
        first = True
        for item in items:
            if not first:
                put("," + inner)
            first = False
            self.value(item, level + 1)
            if len(self.parts) >= CHUNK:
                self.flush()
        put("\n" + INDENT * level + "]")

    def object(self, mapping: dict[Any, Any], level: int) -> None:
        put = self.parts.append
        # sanitised keys first, as `sanitize` builds its copy: equal keys merge (first place, last value);
        # a mapping whose keys are all text the sanitiser keeps as it is is written as it stands
        known = _CLEAN_KEYS
        if known.issuperset(mapping) or _all_clean(mapping):
            clean = mapping
        else:
            clean = {(strip_controls(k, keep_newlines=True) if isinstance(k, str) else k): v
                     for k, v in mapping.items()}
        if not clean:
            put("{}")
            return
        inner = "\n" + INDENT * (level + 1)
        put("{" + inner)
        first = True
        for key, item in clean.items():
            if not first:
                put("," + inner)
            first = False
            put(encode_basestring(key if isinstance(key, str) else _key(key)))
            put(": ")
            self.value(item, level + 1)
            if len(self.parts) >= CHUNK:
                self.flush()
        put("\n" + INDENT * level + "}")


class _Utf8:
    """A text stream gathering what is written as UTF-8, in one growing buffer."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def write(self, text: str) -> None:
        self.buffer += text.encode("utf-8")


class _Texts:
    """A text stream keeping what is written as a list of texts."""

    def __init__(self, texts: list[str]) -> None:
        self.write = texts.append


def encoded(data: object) -> bytearray:
    """The UTF-8 bytes of `json_text(sanitize(data, keep_newlines=True))` (no newline after it), made without
    a sanitised copy of `data`, the text as one string, or the pieces beside their joined copy: a document of
    every one of 10 000 sessions is tens of megabytes."""
    from rcs_tui.views.json_text import escape_controls

    sink = _Utf8()
    out = _Writer(sink, escape_controls)  # type: ignore[arg-type]
    out.value(data, 0)
    out.flush()
    return sink.buffer


def encoded_at(data: object, level: int) -> Encoded:
    """`data` encoded as `write` would write it at nesting `level` (sanitised; terminal escaping is left to
    the writer that finally writes it)."""
    texts: list[str] = []
    out = _Writer(_Texts(texts), str)  # type: ignore[arg-type]
    out.value(data, level)
    out.flush()
    return Encoded("".join(texts), level)


def write(data: object, stream: IO[str], escape: Callable[[str], str]) -> None:
    """Write `data` as indented, sanitised, strict JSON and a newline; `escape` is applied to the text before
    each write (it must act per character: pieces are cut anywhere)."""
    out = _Writer(stream, escape)
    out.value(data, 0)
    out.parts.append("\n")
    out.flush()
