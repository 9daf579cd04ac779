"""The quick parse of a state file (`plain_object`, taken for almost every file of a whole-tree read) gives
exactly the object the full strict parse gives, or leaves the file to it: over random documents written
compactly and indented, then torn, padded, prefixed with a byte order mark, spliced with NUL bytes, NaN,
infinite and huge numbers, lone surrogate escapes, nesting at and past the cap, and trailing garbage.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from rcs_tui.files.io import MAX_JSON_DEPTH, BytesRead, parse_json, plain_object

PATH = Path("/p/.rcs/state/forge-state.json")


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.choice(["int", "float", "bool", "null", "text", "text", "list", "dict"] if depth < 4 else
                      ["int", "float", "bool", "null", "text"])
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70])
    if kind == "float":
        return rng.choice([0.5, -1e-9, 1.5e300, 3.0])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "text":
        return rng.choice(["executing", "complete", "x" * 41, "ünïcode ✓", "tab\there", 'q"uote', "back\\slash",
                           "\u2028", "[{[{", ""])
    if kind == "list":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["a", "active", "mode", "é", "k k"]): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _document(rng: random.Random) -> bytes:
    doc = {"active": rng.random() < 0.5, "mode": "forge", "current_phase": "executing", "iteration": 3}
    doc.update({f"f{i}": _value(rng, 1) for i in range(rng.randint(0, 4))})
    top: Any = doc if rng.random() < 0.9 else rng.choice([[doc], "text", 3, None])
    text = json.dumps(top, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < 0.3)
    return (text + rng.choice(["", "\n", " \t\r\n"])).encode()


def _hostile(rng: random.Random, raw: bytes) -> bytes:
    """`raw` changed in one of the ways a torn write, a hand edit or a hostile file changes it."""
    cut = rng.randint(0, len(raw))
    choice = rng.randrange(16)
    if choice == 0:
        return raw[:cut]
    if choice == 1:
        return raw[:cut] + b"\x00" + raw[cut:]
    if choice == 2:
        return b"\xef\xbb\xbf" + raw
    if choice == 3:
        return rng.choice([b" ", b"\n\t", b"\x0b", b"\xc2\xa0"]) + raw
    if choice == 4:
        return raw + rng.choice([b"x", b"}", b" {}", b"\x0c", b"\xc2\xa0", b"\xe2\x80\xa8"])
    if choice == 5:
        return raw.replace(b'"iteration": 3', rng.choice([b'"iteration": NaN', b'"iteration": -Infinity',
                                                          b'"iteration": 1e999', b'"iteration": ' + b"9" * 5000]))
    if choice == 6:
        return raw.replace(b'"executing"', rng.choice([b'"\\ud800"', b'"\\uDFFFx"', b'"\\ud83d\\ude00"',
                                                       b'"\\u00e9"']))
    if choice == 7:
        depth = rng.choice([MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, 5000])
        return raw.replace(b'"executing"', b"[" * depth + b"]" * depth, 1)
    if choice == 8:
        return raw[:cut] + bytes([rng.randrange(256)]) + raw[cut + 1:]
    if choice == 9:
        return raw.replace(b"{", b'{"active": 1, ', 1)  # a repeated key: the last one wins in both
    if choice == 10:
        return raw.decode().encode("utf-16")
    if choice == 11:
        return b"\xff" + raw
    return raw


def _shape(data: Any) -> str:
    """The value with every type told apart (`1`, `1.0` and `true` differ) and keys in order."""
    return repr(data)


@pytest.mark.parametrize("seed", range(8))
def test_the_quick_parse_gives_the_strict_parses_object_or_leaves_the_file_to_it(seed: int) -> None:
    rng = random.Random(seed)
    taken = left = 0
    for _ in range(600):
        plain = _document(rng)
        for raw in (plain, _hostile(rng, plain)):
            reference = parse_json(BytesRead(PATH, True, raw=raw))
            quick = plain_object(raw)
            if quick is None:
                left += 1
                continue
            taken += 1
            assert reference.ok and isinstance(reference.data, dict), raw
            assert _shape(quick) == _shape(reference.data), raw
            for key, value in quick.items():  # shared the same way: one copy of each name and short value
                assert key is sys.intern(key)
                if isinstance(value, str) and len(value) <= 40:
                    assert value is sys.intern(value)
    assert taken > 500 and left > 200, (taken, left)


def test_every_well_formed_object_takes_the_quick_parse() -> None:
    """The files a whole-tree read meets are objects, written compactly or indented, with a newline or not."""
    rng = random.Random(7)
    for _ in range(300):
        doc = {"active": True, "mode": "forge", "f": _value(rng, 1)}
        for text in (json.dumps(doc), json.dumps(doc, indent=2) + "\n", " " + json.dumps(doc) + " \r\n"):
            quick = plain_object(text.encode())
            assert quick is not None and _shape(quick) == _shape(parse_json(BytesRead(PATH, True,
                                                                                    raw=text.encode())).data)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1])
def test_objects_nested_in_objects_past_the_cap_are_left_to_the_full_parse(depth: int) -> None:
    """Nesting made of objects alone (no list to count): the quick parse takes it up to the cap and leaves
    one level deeper to the full parse, which refuses it."""
    raw = ('{"a": ' * depth + "1" + "}" * depth).encode()
    reference = parse_json(BytesRead(PATH, True, raw=raw))
    quick = plain_object(raw)
    if depth > MAX_JSON_DEPTH:
        assert quick is None and not reference.ok
    else:
        assert reference.ok and quick == reference.data
