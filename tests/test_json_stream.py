"""`--json` output written as it is encoded is byte for byte the text `dumps` makes: sanitised, strict,
indented the same, whatever the data holds."""

from __future__ import annotations

import io
import json
import random

import pytest

from rcs_tui.cli.jsonout import dumps, write_json
from rcs_tui.views import json_stream as jsonstream
from rcs_tui.views.json_text import escape_controls

HOSTILE = ["plain", "", "\x1b[31mred\x1b[0m", "a\nb\tc", "bidi\u202eevil", "zero\u200bwidth", "\ufeffbom",
           "c1\x85\x9b[2J", "del\x7f", "osc\x1b]52;c;aGk=\x07", "\ud800lone", "é ü 中文 🙂", '"quoted\\"', "#{tmux}"]


def _value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([*HOSTILE, None, True, False, 0, -7, 2**70, 1.5, -0.0, 1e300, float("nan"),
                           float("inf"), float("-inf"), 3.0])
    if roll < 0.7:
        items = [_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
        return tuple(items) if rng.random() < 0.2 else items
    keys = [rng.choice([*HOSTILE, "k", "red", "bidievil", 1, 2.5, True, False, None])
            for _ in range(rng.randrange(0, 6))]
    return {k: _value(rng, depth + 1) for k in keys}


def _streamed(data: object) -> str:
    out = io.StringIO()
    jsonstream.write(data, out, escape_controls)
    return out.getvalue()


@pytest.mark.parametrize("chunk", [1, 3, jsonstream.CHUNK])
def test_streamed_text_is_the_text_dumps_makes(monkeypatch, chunk):
    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(400):
        data = _value(rng, 0)
        assert _streamed(data) == dumps(data) + "\n"


def test_keys_that_sanitise_alike_merge_as_in_the_copy():
    data = {"red": 1, "\x1b[31mred": 2, "x": {"a\u200b": [1], "a": ()}}
    assert _streamed(data) == dumps(data) + "\n"
    assert json.loads(_streamed(data)) == {"red": 2, "x": {"a": []}}


def test_what_json_cannot_carry_is_refused_as_before():
    with pytest.raises(TypeError):
        _streamed({"a": object()})
    with pytest.raises(TypeError):
        dumps({"a": object()})
    with pytest.raises(ValueError):
        _streamed({float("nan"): 1})
    with pytest.raises(ValueError):
        dumps({float("nan"): 1})


def test_write_json_prints_dumps_and_a_newline(capsys):
    doc = {"scopes": [{"id": f"s{i}", "modes": {"forge": {"active": True, "note": "\x9b"}}} for i in range(3000)]}
    write_json(doc)
    assert capsys.readouterr().out == dumps(doc) + "\n"


def test_the_stored_document_is_the_text_dumps_makes_as_utf8():
    rng = random.Random(5)
    for _ in range(400):
        data = _value(rng, 0)
        try:
            want = dumps(data).encode("utf-8")
        except (TypeError, ValueError):
            continue
        assert jsonstream.encoded(data) == want
