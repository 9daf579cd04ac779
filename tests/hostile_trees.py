"""Session trees holding what a runtime, a crash or a hand edit leaves: every kind of mode file content and
every odd entry a listing must judge (directories named like files, links in and out of the tree, FIFOs)."""

from __future__ import annotations

import os
import random

from statefix import canonical, dead_pid, mode, state_dir, write

MODES = ("forge", "team", "blueprint", "ultrawork", "autopilot")
# Mode-file contents a runtime (or a crash, or a hand edit) leaves: each judged active or not by the reader.
CONTENTS = (
    '{"active": true, "current_phase": "executing"}',
    '{"active": true, "current_phase": "complete"}',
    '{"active": true, "current_phase": "CANCELLED "}',
    '{"active": false, "current_phase": "cleared"}',
    '{"active": "true"}',
    '{"active": true}',
    '{"active": true, "iteration": NaN}',
    '{"active": true, "current_phase": "executing", "budget": 1e400}',  # a number past a float
    '{"active": true, "current_phase": "executing", "at": -Infinity}',
    '\ufeff{"active": true, "current_phase": "executing"}',  # a byte order mark
    '{"active": false, "active": true, "current_phase": "executing"}',  # the last of a repeated key
    '{"active": true, "current_phase": "executing"',  # torn mid-write
    "",
    "[1, 2]",
    '{"active": true, "x": "\\ud800"}',  # a lone surrogate escape
    '{"active": true, "x": "\\ud83d\\ude00"}',  # a whole pair: fine
    '{"active": true, "x": ' + "[" * 120 + "]" * 120 + "}",  # nested past the cap
    '{"active": true, "x": "' + "[" * 120 + '"}',  # brackets in text only: fine
    '{"active": true}\x00',
    b'{"active": true, "x": "\xff"}',  # not UTF-8
)


def put(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def hostile_tree(root, rng: random.Random, sessions: int):
    """Sessions with random mode files, plus the shapes the listing itself must judge as a full read does."""
    outside = root.parent / f"{root.name}-outside"
    put(outside / "forge-state.json", CONTENTS[0])
    for i in range(sessions):
        sid = f"s-{i:03d}"
        for name in rng.sample(MODES, rng.randint(0, 4)):
            put(state_dir(root, sid) / f"{name}-state.json", rng.choice(CONTENTS))
        if rng.random() < 0.3:
            canonical(root, ["forge"], sid)
        odd = state_dir(root, sid) / "deep-interview-state.json"
        odd.parent.mkdir(parents=True, exist_ok=True)
        roll = rng.random()
        if roll < 0.1:  # a directory named like a mode file
            odd.mkdir()
        elif roll < 0.2:  # a mode file that is a link out of the tree
            odd.symlink_to(outside / "forge-state.json")
        elif roll < 0.3:  # a link to a sibling: inside the tree
            odd.symlink_to(state_dir(root, sid) / "forge-state.json")
        fifo = state_dir(root, sid) / "ultrawork-state.json"
        if rng.random() < 0.05 and not fifo.exists():
            fifo.parent.mkdir(parents=True, exist_ok=True)
            os.mkfifo(fifo)
    sessions_dir = state_dir(root, "x").parent
    sessions_dir.mkdir(parents=True, exist_ok=True)
    (sessions_dir / "s-linked").symlink_to(state_dir(root, "s-000"))  # a link inside .rcs: followed
    (sessions_dir / "s-out").symlink_to(outside)  # a link out of .rcs: not a session
    (sessions_dir / "not a name").mkdir()
    write(sessions_dir / "s-file", "{}")  # a file, not a session directory


def doctor_shapes(root, rng: random.Random, sessions: int) -> None:
    """What the doctor reports, spread over every session: stale and duplicate canonical entries, orphans,
    dead owners, softened handoffs, sessions that cleared a mode root still has active, a torn set."""
    for m in ("team", "forge", "autopilot"):
        mode(root, m, None, current_phase="executing")  # root copies: survivors where a session cleared them
    canonical(root, ["team", "forge", "blueprint"])
    for i in range(sessions):
        sid = f"s-{i:03d}"
        roll = rng.random()
        if roll < 0.25:
            mode(root, rng.choice(("team", "forge")), sid, active=False, current_phase="cleared")
        elif roll < 0.4:
            mode(root, "ultraqa", sid, current_phase="executing", owner_pid=dead_pid())
        elif roll < 0.5:
            mode(root, "autoresearch", sid, active=False, current_phase="complete",
                 handoff="Done. If you want, I can run the tests again.")
        if rng.random() < 0.5:
            listed = rng.sample(MODES, rng.randint(1, 3))
            canonical(root, listed + rng.sample(listed, 1), sid)  # an entry twice
        elif rng.random() < 0.1:
            write(root / ".rcs" / "state" / "sessions" / sid / "skill-active-state.json", '{"version": 1, "act')
    for sid in (None, f"s-{sessions - 1:03d}"):  # a softened handoff in root and in the last session at least
        mode(root, "autoresearch", sid, active=False, current_phase="complete",
             summary="Would you like me to continue?")
