"""JSON that parses as text but trips Python's limits (5 000-digit integers, 100 000-deep nesting).

`json.loads` raises a plain ValueError for an integer longer than 4 300 digits and RecursionError for
deep nesting; both must become a per-file error or a skipped line, never an exception out of a reader.
Nesting past the readers' own cap (100 levels) is refused where the file or the input is read.
"""

from __future__ import annotations

import json

import pytest

from rcs_tui.files.io import read_json
from rcs_tui.state.journal import read_journal
from rcs_tui.state.tasks import read_transcript
from rcs_tui.state.txn import JOURNAL_REL

HUGE_INT = b'{"id": "x", "files": [], "n": 1' + b"0" * 5000 + b"}"
DEEP = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
GOOD = json.dumps({"id": "20260101T000000-abcdef", "files": [], "action": "state clear forge"}).encode()


def test_state_file_with_huge_integer_is_a_file_error(tmp_path):
    path = tmp_path / "forge-state.json"
    path.write_bytes(HUGE_INT)
    read = read_json(path)
    assert read.exists and read.error and "invalid JSON" in read.error


def test_journal_skips_huge_integer_and_deep_lines(tmp_path):
    path = tmp_path / JOURNAL_REL
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join([HUGE_INT, DEEP, GOOD]) + b"\n")
    assert [e["id"] for e in read_journal(tmp_path)] == ["20260101T000000-abcdef"]


def test_transcript_reports_huge_integer_line_as_bad(tmp_path):
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(b"\n".join([GOOD, HUGE_INT]) + b"\n")
    t = read_transcript(path)
    assert len(t.entries) == 1 and t.bad_lines == (2,)


def _chain(n: int) -> str:
    return "\n".join(["stateDiagram-v2", "[*] --> s0", *(f"s{i} --> s{i + 1} : step {i}" for i in range(n))]) + "\n"


def _machine_cost(n: int) -> float:
    """Best of three: parse a chain of `n` edges and ask every graph question a timeline and a check ask."""
    import time

    from rcs_tui.core.machine import parse_machine

    text = _chain(n)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        m = parse_machine(text, "chain")
        m.bfs_order()
        m.sinks()
        m.transitive_predecessors(f"s{n}")
        m.reachable_from("s0")
        m.validate_transition(f"s{n - 1}", f"s{n}")
        best = min(best, time.perf_counter() - t)
    return best


def test_a_huge_diagram_costs_in_proportion_to_its_size():
    """A 0.5 MB SKILL.md (a 16 000-edge chain, under the size cap) once made `rp1 check`, `show` and
    `machines` run past 10 s: parsing and every graph question were quadratic. Eight times the edges now
    cost about eight times as much (a quadratic cost would be about sixty-four times)."""
    small, large = _machine_cost(2000), _machine_cost(16000)
    assert large / small < 24, (small, large)


def test_a_config_file_past_the_parsers_limits_is_a_clear_error_for_every_command(tmp_path, run_cli):
    """A 3 000-deep array or a 5 001-digit integer in config.toml once gave a raw traceback (RecursionError,
    ValueError) from `config`, `doctor`, `state` and "internal error" from `hud --once`."""
    (tmp_path / "p" / ".rcs").mkdir(parents=True)
    deep, long = tmp_path / "deep.toml", tmp_path / "long.toml"
    deep.write_text("x = " + "[" * 3000 + "]" * 3000 + "\n")
    long.write_text("watch_seconds = 1" + "0" * 5000 + "\n")
    for cfg, why in ((deep, "nested deeper than can be read"), (long, "a number too long to read")):
        for args in (["config"], ["doctor"], ["state", "list-active"], ["hud", "--once"]):
            res = run_cli(*args, "--root", str(tmp_path / "p"), env={"RCS_TUI_CONFIG": str(cfg)})
            assert res.code == 1, (args, res.stdout)
            assert res.error.startswith(f"{cfg}: invalid TOML: ") and why in res.error, (args, res.error)
            assert json.loads(res.stderr.strip().splitlines()[-1])["kind"] == "bad_config"


@pytest.mark.parametrize("depth", [101, 900])
def test_json_nested_deeper_than_the_cap_is_refused_where_it_is_read(project, run_cli, depth):
    """A document that parses just under the interpreter's recursion limit (depth 900) used to end in
    `internal error: RecursionError` in the sanitiser of `state read`, `state get-status` and `task show`."""
    from tests.fixtures_tasks import make_task

    nested = "[" * depth + "]" * depth
    (project / ".rcs/state/forge-state.json").write_text('{"active": true, "x": ' + nested + "}")
    make_task(project, "t1", "codegen", state={"phase": "codegen", "x": json.loads("[" * 50 + "]" * 50)})
    (project / ".rcs/tasks/t1/state.json").write_text('{"phase": "codegen", "x": ' + nested + "}")
    why = "JSON nested deeper than 100 levels"
    res = run_cli("state", "read", "--mode", "forge", "--json", "--root", str(project))
    assert res.code == 1 and res.error == f".rcs/state/forge-state.json: {why}"
    status = run_cli("state", "get-status", "--json", "--root", str(project))
    assert status.code == 0 and status.json["statuses"]["forge"]["error"] == why
    res = run_cli("task", "show", "t1", "--json", "--root", str(project))
    assert res.code == 1 and res.error == f".rcs/tasks/t1/state.json: {why}"
    res = run_cli("state", "write", "--mode", "ultrawork", "--input", '{"x": ' + nested + "}", "--json",
                  "--root", str(project))
    assert res.code == 1 and res.error == "--input: invalid JSON: nested deeper than 100 levels"

