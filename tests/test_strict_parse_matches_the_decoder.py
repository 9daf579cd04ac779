"""`loads_strict` gives what the standard decoder with the runtime's rules gives, value or error word for word,
whichever way it takes (an object is handed straight to the scanner, anything else goes through `decode`;
bytes starting `{"` skip the encoding guess): over random documents and the torn, padded, re-encoded and
hostile variants of them a state file or a journal line can be.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_plain_object_matches_strict_parse import _document, _hostile

from rcs_tui.files.io import MAX_JSON_DEPTH, NestedTooDeep, loads_strict


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is too large for a float")
    return value


def _reference(raw: bytes, as_text: bool) -> tuple[str, Any]:
    """What the decoder gives for `raw` (as its text when `as_text`): ("ok", value) or (error class, words)."""
    try:
        text: Any = raw.decode(json.detect_encoding(raw), "surrogatepass")
    except UnicodeDecodeError as exc:
        return "UnicodeDecodeError", str(exc)
    try:
        value = json.loads(text if as_text else raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        return "NestedTooDeep", "nested deeper than 100 levels"
    except ValueError as exc:
        return type(exc).__name__, str(exc)
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _depth(value) > MAX_JSON_DEPTH:
        return "NestedTooDeep", "nested deeper than 100 levels"
    return "ok", repr(value)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _got(raw: bytes, as_text: bool) -> tuple[str, Any]:
    try:
        text: Any = raw.decode(json.detect_encoding(raw), "surrogatepass") if as_text else raw
    except UnicodeDecodeError as exc:
        return "UnicodeDecodeError", str(exc)
    try:
        return "ok", repr(loads_strict(text))
    except NestedTooDeep as exc:
        return "NestedTooDeep", str(exc)
    except ValueError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("seed", range(6))
def test_the_strict_parse_gives_the_decoders_value_or_its_exact_error(seed: int) -> None:
    rng = random.Random(seed)
    kinds: set[str] = set()
    for _ in range(500):
        plain = _document(rng)
        for raw in (plain, _hostile(rng, plain), plain.rstrip() + b" x", b"\n" + plain):
            for as_text in (False, True):
                want = _reference(raw, as_text)
                assert _got(raw, as_text) == want, raw[:200]
                kinds.add(want[0] if want[0] != "JSONDecodeError" else want[1].split(":")[0])
    assert {"ok", "Extra data", "NestedTooDeep", "ValueError"} <= kinds, kinds


def test_an_object_followed_by_anything_but_whitespace_is_refused_with_where_it_is() -> None:
    with pytest.raises(ValueError, match=r"^Extra data: line 1 column 10 \(char 9\)$"):
        loads_strict('{"a": 1} x')
    with pytest.raises(ValueError, match=r"^Extra data: line 2 column 1 \(char 9\)$"):
        loads_strict(b'{"a": 1}\n}')
    assert loads_strict('{"a": 1} \t\r\n') == {"a": 1}
    with pytest.raises(ValueError, match=r"^Expecting value: line 1 column 1 \(char 0\)$"):
        loads_strict("")
    # an object cut after its first key, or holding a bare value: never read from its second character
    with pytest.raises(ValueError, match=r"^Expecting ':' delimiter: line 1 column 5 \(char 4\)$"):
        loads_strict('{"a"')
    with pytest.raises(ValueError, match=r"^Expecting property name enclosed in double quotes"):
        loads_strict("{1}")
