"""Finding a journal entry by id (`undo ID`, `redo ID`) reads past the lines that cannot change the answer
without parsing them, and answers exactly what parsing every line answers: the same entry, complete and
undone as before, or the same refusal."""

from __future__ import annotations

import base64
import json
import random

import pytest

from rcs_tui.state import journal
from rcs_tui.state.journal import find_entry
from rcs_tui.state.txn import TxnError

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def _entry(rng: random.Random, eid: str, ids: list[str]) -> dict:
    entry = {"id": eid, "action": "state clear forge", "at": "2026-11-25T21:41:36.953Z", "summary": {"n": len(ids)},
             "files": [{"path": f".rcs/state/f{rng.randrange(5)}.json", "why": "x",
                        "before_b64": base64.b64encode(rng.randbytes(60)).decode(), "after_sha": None}],
             "state": rng.choice(["done", "done", "done", "pending", "aborted"])}
    if ids and rng.random() < 0.45:  # chains: undos of undos, redos, some of them aborted later
        entry[rng.choice(["undoes", "redoes"])] = rng.choice(ids[-4:])
    if rng.random() < 0.1:
        entry["files"] = []
    if rng.random() < 0.1:
        entry.pop("state")
    return entry


def _line(rng: random.Random, entry: dict) -> str:
    text = json.dumps(entry, ensure_ascii=False)
    roll = rng.random()
    if roll < 0.05:  # a foreign writer spelling a key or the id with \u escapes
        text = text.replace('"undoes"', '"\\u0075ndoes"').replace('"id"', '"\\u0069d"')
    elif roll < 0.08:
        text = text.replace(entry["id"], "".join(f"\\u{ord(c):04x}" for c in entry["id"]), 1)
    return text


def _journal(rng: random.Random, root, n: int) -> list[str]:
    ids: list[str] = []
    lines = []
    for k in range(n):
        eid = f"20261125T2141{k:02d}-{rng.randbytes(6).hex()}"
        lines.append(_line(rng, _entry(rng, eid, ids)))
        ids.append(eid)
        roll = rng.random()
        if roll < 0.15:
            lines.append(json.dumps({"commit": rng.choice(ids[-3:])}))
        elif roll < 0.25:
            lines.append(json.dumps({"abort": rng.choice(ids[-3:])}))
        elif roll < 0.3:
            lines.append(rng.choice(["not json", "[1, 2]", '{"id": 5, "files": []}', '{"id": "torn", "fil']))
    path = root / JOURNAL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return ids


def _answer(root, entry_id):
    try:
        return find_entry(root, entry_id)
    except TxnError as exc:
        return ("refused", str(exc), exc.error_kind)


@pytest.mark.parametrize("block", [1 << 20, 4096, 97])  # small blocks: lines across blocks, blocks passed over
@pytest.mark.parametrize("seed", range(30))
def test_found_by_id_as_when_every_line_is_parsed(tmp_path, monkeypatch, seed, block):
    monkeypatch.setattr(journal, "BLOCK", block)
    rng = random.Random(seed)
    ids = _journal(rng, tmp_path, 40)
    asked = [*ids, "20261125T999999-000000000000", "no/such\\id"]
    skipping = {eid: _answer(tmp_path, eid) for eid in asked}
    monkeypatch.setattr(journal, "naming", lambda entry_id: None)
    assert skipping == {eid: _answer(tmp_path, eid) for eid in asked}


@pytest.mark.parametrize("block", [1 << 20, 300])
def test_lines_that_cannot_matter_are_not_parsed(tmp_path, monkeypatch, block):
    monkeypatch.setattr(journal, "BLOCK", block)
    lines = [json.dumps({"id": f"entry-{k:03d}", "files": [{"path": ".rcs/state/a.json"}], "state": "done"})
             for k in range(50)]
    (tmp_path / JOURNAL).parent.mkdir(parents=True)
    (tmp_path / JOURNAL).write_text("\n".join(lines) + "\n")
    parsed = []
    real = journal.loads_strict
    monkeypatch.setattr(journal, "loads_strict", lambda raw, **kw: parsed.append(raw) or real(raw, **kw))
    assert find_entry(tmp_path, "entry-003")["id"] == "entry-003"
    assert parsed == [lines[3].encode()]
