"""The doctor's report of thousands of sessions, made on two cores.

Each session's findings and repair plans depend on that session and root alone, so a forked copy of the
process reads, judges, plans and encodes the later part of the sessions while this process does root and
the earlier part. Root's own view needs one fact from every session (which of root's active modes a
session cleared), which the copy sends with its findings. The report is then put together in exactly the
order one process lists it (members first, each id once, then owners and softeners, the pointer, file
errors, the journal, teams, rp1; sorted most severe first), so it reads byte for byte as one process
makes it (`tests/test_doctor_split_report.py` compares both on random trees). Should the copy give no
answer, its part is done here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from rcs_tui.files.layout import Layout
from rcs_tui.project.doctor import (
    IDLE_RUN_SECONDS,
    Finding,
    _error_findings,
    _journal_findings,
    _pointer_findings,
    _rp1_findings,
    _scope_findings,
    _team_findings,
    diagnose,
    listed_order,
)
from rcs_tui.project.forked import Forked, cores
from rcs_tui.state.ops import PlanReads
from rcs_tui.state.reader import list_sessions, read_snapshot, root_tombstones
from rcs_tui.state.session import Resolution, resolve_session
from rcs_tui.views.json_stream import Encoded, encoded_at

SPLIT_FROM = 2000  # sessions: below this one process answers before a second one pays for itself
THEIR_SHARE = 0.54  # of the sessions, the copy's: root, the journal, its leftover-file walk of every directory,
# teams and rp1 stay here
ITEM_LEVEL = 2  # where a finding sits in the report: {"findings": [ here ] }
# How long the copy's answer is waited for, once this process has done its own part (about as much work):
# this many times what that took, and at least the floor. Past it, its part is done here instead.
ANSWER_SLOWER = 4.0
ANSWER_FLOOR = 10.0


@dataclass(frozen=True, slots=True)
class Shown:
    """One finding as `doctor --json` lists it: where it goes, its severity, its JSON."""

    id: str
    order: tuple[int, str, str]
    severity: str
    item: dict[str, Any] | Encoded


@dataclass(frozen=True, slots=True)
class Part:
    """What the sessions of one part add to the report (the copy's answer)."""

    members: list[Shown]
    others: list[Shown]
    errors: list[Shown]
    tombstoned: frozenset[str]


def report(root: Path, session_id: str | None = None, *, rp1_db: str | None = None,
           idle_seconds: float = IDLE_RUN_SECONDS, split_from: int | None = None) -> list[Shown]:
    """Every finding with its repair plan, as `doctor --json` lists them; split between two processes
    from `split_from` sessions (`SPLIT_FROM`) when a second core is free to take part."""
    names = list_sessions(Layout(root), [])
    if len(names) < max(SPLIT_FROM if split_from is None else split_from, 2) or cores() < 2:
        reads = PlanReads()
        found = diagnose(root, session_id, rp1_db=rp1_db, idle_seconds=idle_seconds, reads=reads)
        return [_shown(root, f, reads) for f in found]
    resolution = resolve_session(Layout(root), session_id)
    cut = len(names) - int(len(names) * THEIR_SHARE)
    mine, theirs = frozenset(names[:cut]), frozenset(names[cut:])
    started = time.monotonic()
    with Forked(partial(_sent, root, resolution, theirs)) as copy:
        snap = read_snapshot(root, resolution.session_id, resolution=resolution, share=mine)
        reads = PlanReads()
        reads.use(snap)
        layout = Layout(root)
        seen: set[str] = set()
        sids: list[str | None] = list(sorted(snap.sessions))
        own_members, own_others = _scope_findings(snap, layout, sids, seen)
        own = [_shown(root, f, reads, encode=True) for f in own_members + own_others]
        rest = _journal_findings(root) + _team_findings(root) + _rp1_findings(root, rp1_db, time.time(),
                                                                               idle_seconds)
        answer = copy.answer(max(ANSWER_FLOOR, ANSWER_SLOWER * (time.monotonic() - started)))
    part = _received(answer) or _part(root, resolution, theirs)
    # root's view, now that every session's clears are known (it is listed first among the members)
    elsewhere = part.tombstoned
    root_members, root_others = _scope_findings(snap, layout, [None], set(), elsewhere)
    listed = [_shown(root, f, reads) for f in root_members]
    taken = {s.id for s in listed}  # root's members come first: a session's view repeating one is dropped
    for s in own[:len(own_members)] + part.members:
        if s.id not in taken:
            taken.add(s.id)
            listed.append(s)
    listed += [_shown(root, f, reads) for f in root_others] + own[len(own_members):] + part.others
    tail = _pointer_findings(snap) + _error_findings(root, snap.errors)
    listed += [_shown(root, f, reads) for f in tail] + part.errors
    listed += [_shown(root, f, reads) for f in rest]
    return sorted(listed, key=lambda s: s.order)


def _part(root: Path, resolution: Resolution, names: frozenset[str]) -> Part:
    """The findings of these sessions, each with its plan, encoded where the report lists them."""
    snap = read_snapshot(root, resolution.session_id, resolution=resolution, share=names)
    reads = PlanReads()
    reads.use(snap)
    sids: list[str | None] = list(sorted(snap.sessions))
    members, others = _scope_findings(snap, Layout(root), sids, set())
    errors = _error_findings(root, [e for sid in sorted(snap.sessions) for e in snap.sessions[sid].errors])
    return Part([_shown(root, f, reads, encode=True) for f in members],
                [_shown(root, f, reads, encode=True) for f in others],
                [_shown(root, f, reads, encode=True) for f in errors],
                frozenset(root_tombstones(snap.root_scope, snap.sessions)))


Sent = list[tuple[str, tuple[int, str, str], str, str]]


def _sent(root: Path, resolution: Resolution, names: frozenset[str]) -> tuple[Sent, Sent, Sent, list[str]]:
    """The copy's part as plain tuples and texts: pickled and read back in a third of the time records take."""
    part = _part(root, resolution, names)

    def plain(listed: list[Shown]) -> Sent:
        return [(s.id, s.order, s.severity, s.item.text) for s in listed if isinstance(s.item, Encoded)]

    return plain(part.members), plain(part.others), plain(part.errors), sorted(part.tombstoned)


def _received(answer: object) -> Part | None:
    """The copy's part from what `_sent` made; None for anything else."""
    try:
        members, others, errors, tombstoned = cast("tuple[Sent, Sent, Sent, list[str]]", answer)

        def shown(plain: Sent) -> list[Shown]:
            return [Shown(fid, (order[0], order[1], order[2]), severity, Encoded(text, ITEM_LEVEL))
                    for fid, order, severity, text in plain]

        return Part(shown(members), shown(others), shown(errors), frozenset(tombstoned))
    except (TypeError, ValueError, IndexError):
        return None


def _shown(root: Path, f: Finding, reads: PlanReads, *, encode: bool = False) -> Shown:
    item = f.as_json(root, with_plan=True, reads=reads)
    return Shown(f.id, listed_order(f), f.severity, encoded_at(item, ITEM_LEVEL) if encode else item)
