"""JSON that parses as text but trips Python's limits (5 000-digit integers, 100 000-deep nesting).

`json.loads` raises a plain ValueError for an integer longer than 4 300 digits and RecursionError for
deep nesting; both must become a per-file error or a skipped line, never an exception out of a reader.
"""

from __future__ import annotations

import json

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
