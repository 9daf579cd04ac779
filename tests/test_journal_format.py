"""What one journal line may be: every rule the reader applies to an entry (and the writer checks first),
each with the reason it gives."""

from __future__ import annotations

import json

import pytest

import rcs_tui.state.journal_format as fmt
from rcs_tui.state.journal_format import entry_problem, line_problem

GOOD = {"id": "20261127T000000-abcdefabcdef", "action": "state clear forge", "state": "pending",
        "files": [{"path": ".rcs/state/forge-state.json", "before_b64": "e30=", "after_sha": "ab"}],
        "appends": [{"path": ".rcs/tasks/t1/transcript.jsonl", "line": "{}", "size_before": 0}]}


def with_(**changes):
    entry = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is KeyError:
            entry.pop(key)
        else:
            entry[key] = value
    return entry


@pytest.mark.parametrize(("entry", "why"), [
    (with_(id=7), '"id" is not a string'),
    (with_(id=KeyError), '"id" is not a string'),
    (with_(action=["clear"]), '"action" is not a string'),
    (with_(files={"path": "x"}), '"files" is not a list'),
    (with_(files=KeyError), '"files" is not a list'),
    (with_(files=[GOOD["files"][0], "x"]), "files[1] is not an object"),
    (with_(files=[{"path": 3}]), "files[0].path is not a string"),
    (with_(files=[{"path": "a", "before_b64": 1}]), "files[0].before_b64 is not a string"),
    (with_(files=[{"path": "a", "after_sha": []}]), "files[0].after_sha is not a string"),
    (with_(appends={"path": "a"}), '"appends" is not a list'),
    (with_(appends=["x"]), "appends[0] is not an object with a path and a line"),
    (with_(appends=[{"line": "{}"}]), "appends[0] is not an object with a path and a line"),
    (with_(appends=[{"path": "a"}]), "appends[0] is not an object with a path and a line"),
    (with_(appends=[{"path": "a", "line": "{}", "size_before": -1}]),
     "appends[0].size_before is not a non-negative integer"),
    (with_(appends=[{"path": "a", "line": "{}", "size_before": True}]),
     "appends[0].size_before is not a non-negative integer"),
    (with_(appends=[{"path": "a", "line": "{}", "size_before": "3"}]),
     "appends[0].size_before is not a non-negative integer"),
    (with_(undoes=3), '"undoes" is not a string'),
    (with_(state="applied"), '"state" is not pending, done or aborted'),
])
def test_each_rule_names_what_is_wrong(entry, why):
    assert entry_problem(entry) == why
    assert line_problem(json.dumps(entry).encode()) == why


@pytest.mark.parametrize("entry", [
    GOOD, with_(action=KeyError), with_(appends=KeyError), with_(state=KeyError), with_(state="done"),
    with_(state="aborted"), with_(undoes="x"),
    with_(files=[{"path": "a", "before_b64": None, "after_sha": None}]),
    with_(appends=[{"path": "a", "line": "{}", "size_before": 0}, {"path": "b", "line": "{}"}]),
])
def test_a_usable_entry_passes(entry):
    assert entry_problem(entry) is None
    assert line_problem(json.dumps(entry).encode()) is None


def test_a_line_the_reader_would_not_read():
    assert line_problem(b"[1, 2]") == "not a JSON object"
    assert line_problem(b'{"id": ') == "not JSON the reader accepts (Expecting value: line 1 column 8 (char 7))"
    assert line_problem(b'{"id": NaN}').startswith("not JSON the reader accepts (")
    long = line_problem(b'{"n": 1' + b"0" * 5000 + b"}")  # the parser's reason, cut to 80 characters
    assert long == ("not JSON the reader accepts (Exceeds the limit (4300 digits) for integer string conversion: "
                    "value has 5001 di)")


def test_a_line_longer_than_the_reader_reads(monkeypatch):
    monkeypatch.setattr(fmt, "MAX_LINE", 2 * 1048576)
    line = json.dumps({**GOOD, "pad": "x" * (3 * 1048576)}).encode()
    assert line_problem(line) == "3 MiB, more than the 2 MiB one journal entry may hold"
    assert line_problem(json.dumps({**GOOD, "pad": "x" * (2 * 1048576 - 1000)}).encode()) is None
    monkeypatch.setattr(fmt, "MAX_LINE", 1048576)
    exact = json.dumps({**GOOD, "pad": ""}).encode()
    exact = json.dumps({**GOOD, "pad": "x" * (1048576 - len(exact))}).encode()
    assert len(exact) == fmt.MAX_LINE and line_problem(exact) is None  # exactly the limit is still read
    half = json.dumps({**GOOD, "pad": ""}).encode()
    half = json.dumps({**GOOD, "pad": "x" * (int(3.5 * 1048576) - len(half))}).encode()
    assert line_problem(half) == "4 MiB, more than the 1 MiB one journal entry may hold"
