"""The operator journal (`.rcs/logs/rcs-tui-journal.jsonl` and its rotated generations) and undo by before-image.

The journal is untrusted input. It is read newest first, backwards in fixed-size blocks, through the
confined tree (a symlink or FIFO is refused, never followed or waited on), so memory stays bounded
whatever its size. A line that is not a well-formed entry is skipped with a warning naming its file and
line. Paths in an entry are checked before undo or the doctor touch anything: absolute paths, `..`,
paths outside `.rcs/state`/`.rcs/tasks`, rcs-tui's own journal and lock, or a way through a symlink are
refused with the entry and the path named, and nothing is written.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.history import undone_ids
from rcs_tui.files.fsafe import Refused, Tree, check_rel, max_bytes_for, open_leaf
from rcs_tui.files.io import digest, loads_strict
from rcs_tui.state.journal_format import MAX_LINE, entry_problem
from rcs_tui.state.txn import JOURNAL_KEEP, JOURNAL_REL, FileChange, Plan, TxnError, apply, rotated_name

BLOCK = 1 << 20
# The most of one journal file any reader reads, from its end: rotation keeps a journal far smaller, so only a
# damaged or foreign file reaches it, and a read must stay bounded in time and memory whatever it holds.
READ_LIMIT = 4 * MAX_LINE
DEFAULT_LIMIT = 2000
UNDOABLE = (".rcs/state", ".rcs/tasks")


@dataclass
class JournalScan:
    """What a newest-first pass over the journal found: entries seen so far, warnings, markers."""

    warnings: list[str] = field(default_factory=list)
    undone: set[str] = field(default_factory=set)
    redone: set[str] = field(default_factory=set)
    commits: set[str] = field(default_factory=set)
    aborts: set[str] = field(default_factory=set)
    generations: int = 0


def _gen_rel(gen: int) -> str:
    return str(JOURNAL_REL.parent / rotated_name(gen))


def _lines_backwards(fd: int, size: int, floor: int,
                     wanted: Callable[[bytes], bool] | None) -> Iterator[tuple[int, bytes | None]]:
    """(offset, line) from the end of the file down to `floor`; line None for a line over MAX_LINE (skipped
    unread). A line is kept as its pieces until its start is found, so a long one costs one copy, not one
    per block; above `floor` the first, cut line is dropped. `wanted`: a test that holds for a line only if
    it holds for any bytes containing it (a search for words); the lines lying wholly inside a block it
    does not hold for are not yielded (nor cut out)."""
    pos = size
    parts: list[bytes] = []  # the pieces of the line being read, the newest piece first
    held = 0
    overlong = False
    while pos > floor:
        n = min(BLOCK, pos - floor)
        pos -= n
        block = os.pread(fd, n, pos)
        if not block:
            return
        end = len(block)
        idx = block.rfind(b"\n", 0, end)
        quiet = wanted is not None and idx != -1 and not wanted(block)
        while idx != -1:
            if overlong or held + end - idx - 1 > MAX_LINE:  # its pieces and the part in this block
                yield pos + idx + 1, None
            else:
                line = block[idx + 1:end] + b"".join(reversed(parts)) if parts else block[idx + 1:end]
                if line:
                    yield pos + idx + 1, line
            parts, held, overlong = [], 0, False
            end = idx
            if quiet:  # the lines between the block's first and last newline hold none of the words
                end, quiet = block.find(b"\n"), False
            idx = block.rfind(b"\n", 0, end)
        if end and not overlong:
            parts.append(block[:end])
            held += end
            if held > MAX_LINE:
                overlong, parts, held = True, [], 0
    if floor == 0:
        if overlong:
            yield 0, None
        elif parts:
            yield 0, b"".join(reversed(parts))


def _line_numbers(fd: int, offsets: list[int]) -> dict[int, int]:
    """1-based line numbers of byte offsets, counted forward in blocks (bounded memory)."""
    out: dict[int, int] = {}
    targets = sorted(set(offsets))
    count, pos, i = 1, 0, 0
    while i < len(targets):
        block = os.pread(fd, BLOCK, pos)
        while i < len(targets) and targets[i] < pos + len(block) + (0 if block else 1):
            out[targets[i]] = count + block.count(b"\n", 0, max(0, targets[i] - pos))
            i += 1
        if not block:
            break
        count += block.count(b"\n")
        pos += len(block)
    return out


def scan(root: Path, scan_state: JournalScan | None = None,
         wanted: Callable[[bytes], bool] | None = None) -> Iterator[dict[str, Any]]:
    """Usable entries, newest first, across the journal and its rotated generations.

    Each entry gets `complete` (False: its write-ahead record never committed and no marker followed)
    and `undone`. Aborted entries (refused or rolled back before anything stayed changed) are left out.
    `wanted`: lines it says no to are passed over unparsed (and so never warned about); it must say yes to
    every line whose entry or marker the caller's answer depends on.
    """
    st = scan_state if scan_state is not None else JournalScan()
    tree = Tree(root)
    for gen in range(JOURNAL_KEEP + 1):
        rel = _gen_rel(gen)
        try:
            with tree.parent(rel) as (dfd, name):
                try:
                    fd = open_leaf(dfd, name, os.O_RDONLY, rel)
                except FileNotFoundError:
                    continue
                except Refused as exc:
                    st.warnings.append(str(exc))
                    continue
                try:
                    info = os.fstat(fd)
                    if not stat.S_ISREG(info.st_mode):
                        st.warnings.append(f"{rel}: is not a regular file; not read")
                        continue
                    st.generations = gen + 1
                    bad: list[tuple[int, str]] = []
                    floor = max(0, info.st_size - READ_LIMIT)
                    if floor:
                        st.warnings.append(f"{rel} is {info.st_size / 1048576:.0f} MiB, larger than a journal "
                                           f"grows ({READ_LIMIT // 1048576} MiB are read): only its newest "
                                           "entries are shown; older ones cannot be undone from here")
                    try:
                        yield from _entries(fd, info.st_size, st, bad, floor, wanted)
                    finally:
                        if bad and not floor:
                            numbers = _line_numbers(fd, [off for off, _ in bad])
                            st.warnings.extend(f"{rel} line {numbers.get(off, '?')}: {why}; skipped"
                                               for off, why in sorted(bad))
                        elif bad:  # counting lines would read the whole file: name byte offsets instead
                            st.warnings.extend(f"{rel} at byte {off}: {why}; skipped" for off, why in sorted(bad))
                finally:
                    os.close(fd)
        except FileNotFoundError:
            return
        except (Refused, OSError) as exc:
            st.warnings.append(f"{rel}: {exc}")
            return


def _entries(fd: int, size: int, st: JournalScan, bad: list[tuple[int, str]],
             floor: int, wanted: Callable[[bytes], bool] | None) -> Iterator[dict[str, Any]]:
    for offset, raw in _lines_backwards(fd, size, floor, wanted):
        if raw is None:
            bad.append((offset, f"longer than {MAX_LINE} bytes"))
            continue
        if raw.isspace() or (wanted is not None and not wanted(raw)):
            continue
        try:
            entry = loads_strict(raw, share=False)  # the depth cap keeps forged deep lines out
        except ValueError:
            bad.append((offset, "not JSON (torn or foreign line)"))
            continue
        if not isinstance(entry, dict):
            bad.append((offset, "not a JSON object"))
            continue
        if "id" not in entry and isinstance(entry.get("commit"), str):
            st.commits.add(entry["commit"])
            continue
        if "id" not in entry and isinstance(entry.get("abort"), str):
            st.aborts.add(entry["abort"])
            continue
        why = entry_problem(entry)
        if why:
            bad.append((offset, why))
            continue
        if entry.get("state") == "aborted" or entry["id"] in st.aborts:
            continue
        entry["complete"] = entry.get("state", "done") == "done" or entry["id"] in st.commits
        entry["undone"] = entry["id"] in st.undone
        if isinstance(entry.get("redoes"), str) and not entry["undone"]:  # newest first: a live redo
            st.redone.add(entry["redoes"])                                   # cancels the undo before it
        if isinstance(entry.get("undoes"), str) and not entry["undone"]:  # an undo undone since counts for nothing
            if entry["undoes"] in st.redone:
                st.redone.discard(entry["undoes"])
            else:
                st.undone.add(entry["undoes"])
        yield entry


def load(root: Path, limit: int = DEFAULT_LIMIT) -> tuple[list[dict[str, Any]], list[str]]:
    """The newest `limit` entries (oldest first) and the warnings met on the way."""
    st = JournalScan()
    out = []
    for entry in scan(root, st):
        out.append(entry)
        if len(out) >= limit:
            break
    return out[::-1], st.warnings


def read_journal(root: Path, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """The newest `limit` well-formed entries, oldest first (see `scan`)."""
    return load(root, limit)[0]


def interrupted(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write-ahead entries that never committed and were not rolled back since."""
    done = undone_ids(entries)
    return [e for e in entries if not e["complete"] and e["id"] not in done and not e.get("undone")]


def find_interrupted(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every interrupted entry in the whole journal (only those are kept in memory) and the warnings."""
    st = JournalScan()
    found = [e for e in scan(root, st) if not e["complete"] and not e["undone"]]
    return found[::-1], st.warnings


def blocking_entry(entries: list[dict[str, Any]], entry: dict[str, Any], rel: str) -> dict[str, Any] | None:
    """The newest later entry that changed `rel` and is still in effect: the one to undo first."""
    ids = [e["id"] for e in entries]
    later = entries[ids.index(entry["id"]) + 1:] if entry["id"] in ids else []
    done = undone_ids(entries)
    for e in reversed(later):
        if e["id"] not in done and any(isinstance(f, dict) and f.get("path") == rel for f in e.get("files") or []):
            return e
    return None


# Characters JSON never writes escaped except as `\uXXXX`: an id made of them appears in a line literally.
PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")
# What a line must hold to be an undo, a redo or an abort marker (an aborted undo undoes nothing), unless it
# spells that with `\u`. The markers that say whether the entry looked for is complete hold its id.
CHAIN_WORDS = (b"\\u", b"undoes", b"redoes", b"abort")


def naming(entry_id: str) -> Callable[[bytes], bool] | None:
    """A line test for `scan` when looking for one entry by id: the lines that may be that entry or its
    markers (whether it is complete), an undo, a redo or an abort marker (whether it is undone). No other
    line can change the answer, so a search need not parse it, which on a journal of large before-images
    is most of the cost. None (parse every line) for an id JSON could spell other than literally."""
    if not PLAIN_ID.fullmatch(entry_id):
        return None
    needle = entry_id.encode("ascii")
    escape, undoes, redoes, abort = CHAIN_WORDS  # unrolled: this runs on every block and line of a large journal
    # a lone backslash is found at memchr speed, the two-byte `\u` is not: look for it only where one is
    return lambda raw: (needle in raw or undoes in raw or redoes in raw or abort in raw
                        or (b"\\" in raw and escape in raw))


def find_entry(root: Path, entry_id: str | None) -> dict[str, Any]:
    """The chosen entry, or the newest operator action that changed a file, is not an undo and not yet undone.

    An action that changed nothing is skipped: `undo` must not spend itself on a no-op while the real
    change before it stays in place. Looking for an entry by id parses only the lines that can matter
    (`naming`).
    """
    st = JournalScan()
    for entry in scan(root, st, naming(entry_id) if entry_id else None):
        if entry_id:
            if entry["id"] == entry_id:
                return entry
        elif "undoes" not in entry and not entry["undone"] and (entry.get("files") or entry.get("appends")):
            return entry
    if entry_id:
        gone = (f"; older entries are dropped when the journal rotates (the newest {JOURNAL_KEEP + 1} files are kept)"
                if st.generations > 1 else "")
        cut = [w for w in st.warnings if "only its newest entries are shown" in w]
        raise TxnError(f"no journal entry {entry_id!r} in {JOURNAL_REL}{gone}" + (f" ({cut[0]})" if cut else ""),
                       kind=kinds.NOT_FOUND)
    raise TxnError("nothing to undo: the journal has no undoable entry", kind=kinds.NOT_FOUND)


def pick_entry(entries: list[dict[str, Any]], entry_id: str | None) -> dict[str, Any]:
    """Like `find_entry`, over an already loaded list (oldest first)."""
    done = undone_ids(entries)
    for entry in reversed(entries):
        if entry_id and entry["id"] == entry_id:
            return entry
        if not entry_id and "undoes" not in entry and entry["id"] not in done and entry.get("files"):
            return entry
    raise TxnError(f"no journal entry {entry_id!r} in {JOURNAL_REL}" if entry_id
                   else "nothing to undo: the journal has no undoable entry", kind=kinds.NOT_FOUND)


def _before(entry: dict[str, Any], item: dict[str, Any]) -> bytes | None:
    encoded = item.get("before_b64")
    if encoded is None:
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise TxnError(f"journal entry {entry['id']} has a damaged before-image for {item.get('path')!r}") from exc


def checked_path(tree: Tree, entry: dict[str, Any], rel: object) -> str:
    """An entry's path if undo may touch it: inside `.rcs/state` or `.rcs/tasks`, reached without a symlink."""
    name = rel if isinstance(rel, str) else repr(rel)
    try:
        parts = check_rel(name)
        if "/".join(parts[:2]) not in UNDOABLE:
            raise Refused(name, "is not a state or task file")
        st = tree.lstat(name)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise Refused(name, "is a symlink or not a regular file")
    except Refused as exc:
        raise TxnError(f"journal entry {entry['id']} names an unsafe path {name!r} ({exc.why}); refused, "
                       "nothing was changed") from None
    except OSError as exc:
        raise TxnError(f"journal entry {entry['id']}: cannot inspect {name!r} ({exc.strerror}); nothing was changed"
                       ) from None
    return "/".join(parts)


def _current(tree: Tree, entry: dict[str, Any], rel: str) -> bytes | None:
    try:
        return tree.read(rel, max_bytes_for(rel))
    except (Refused, OSError) as exc:
        raise TxnError(f"cannot undo {entry['id']}: {exc}; nothing was changed") from None


def _unappend(tree: Tree, root: Path, entry: dict[str, Any], item: dict[str, Any]) -> FileChange | None:
    """Remove exactly the line the entry appended, wherever later lines put it (None: it is not there)."""
    rel = checked_path(tree, entry, item["path"])
    current = _current(tree, entry, rel)
    if current is None:
        return None
    if current == b"" and item.get("created") is True:  # killed between creating the file and writing to it
        return FileChange(root / rel, "delete", expect=digest(current), why="remove the file the action created")
    ours = item["line"].rstrip("\n").encode("utf-8") + b"\n"
    start = item.get("size_before") or 0
    at = current.find(ours, start)
    while at > 0 and current[at - 1:at] != b"\n":
        at = current.find(ours, at + 1)
    if at < 0:
        return None
    cut = current[:at] + current[at + len(ours):]
    if at == len(current) - len(ours) and start > 0 and start == at - 1:
        # our append began with a newline only if the file it met was not empty and did not end with one
        cut = cut[:-1] if cut.endswith(b"\n") and not current[:start].endswith(b"\n") else cut
    if not cut and item.get("created") is True:
        return FileChange(root / rel, "delete", expect=digest(current), why="remove the file the action created")
    return FileChange(root / rel, "write", cut, expect=digest(current), why="remove the line the action appended")


def plan_undo(root: Path, entry: dict[str, Any], *, exact: bool = False) -> Plan:
    """Restore each file's before-image and remove appended lines, refusing if a file changed since.

    A file already at its before-image is left alone, which is what rolls back an interrupted entry
    whose process died before changing every file. `exact` (a redo, which is the undo of an undo): every
    file must still hold what the entry wrote; one already back at its before-image was changed since
    by something else (another action did the same), so it is refused like any other change instead of
    being recorded as redone with nothing written. Every path is checked before anything is planned.
    """
    entries = read_journal(root)
    if entry.get("undone") or entry["id"] in undone_ids(entries):
        raise TxnError(f"journal entry {entry['id']} was already undone")
    tree = Tree(root)
    items = [(checked_path(tree, entry, item.get("path")), item) for item in entry["files"]]
    appends = [a for a in entry.get("appends") or [] if "size_before" in a]
    for a in appends:
        checked_path(tree, entry, a.get("path"))
    changes = []
    for rel, item in items:
        data = _current(tree, entry, rel)
        current = digest(data) if data is not None else None
        before = _before(entry, item)
        if not exact and current == (digest(before) if before is not None else None):
            continue
        if current != item.get("after_sha"):
            blocker = blocking_entry(entries, entry, rel)
            first = (f"; undo {blocker['id']} ({blocker.get('action')}) first, it changed {rel} later"
                     if blocker else " by something outside rcs-tui")
            raise TxnError(f"cannot undo {entry['id']}: {rel} changed since ({entry.get('action')}){first}; "
                           "nothing was changed")
        if before is None:
            changes.append(FileChange(root / rel, "delete", expect=current, why="restore: did not exist"))
        else:
            changes.append(FileChange(root / rel, "write", before, expect=current, why="restore before-image"))
    for a in appends:
        change = _unappend(tree, root, entry, a)
        if change is not None:
            changes.append(change)
    summary: dict[str, Any] = {"undoes": entry["id"], "restores": [c.describe(root)["path"] for c in changes]}
    if not changes:  # recorded all the same, so a plain `undo` moves on to the entry before it
        summary["message"] = (f"nothing to restore: every file of {entry['id']} already holds its before-image "
                              "(reverted outside rcs-tui); it is recorded as undone, no file was written")
    def recheck() -> str | None:  # two undos racing: only the first is recorded
        if entry["id"] in undone_ids(read_journal(root)):
            return f"journal entry {entry['id']} was already undone (by another undo meanwhile)"
        return None

    return Plan(action=f"undo {entry.get('action')}", changes=tuple(changes), summary=summary, recheck=recheck)


def entry_about(root: Path, entry: dict[str, Any], plan: Plan) -> dict[str, Any]:
    """What an undo or redo preview shows beside its plan, so the operator sees what is being undone:
    the journal entry (its action, when, by whom) and each planned file's size now and after (None: the
    file is absent). The sizes come from the same files the plan read; none of this is journaled."""
    sizes = []
    for change in plan.changes:
        try:
            now: int | None = os.lstat(change.path).st_size
        except OSError:
            now = None
        after = None if change.action == "delete" else len(change.data() or b"")
        sizes.append({"path": change.describe(root)["path"], "now": now, "after": after})
    return {"entry": {key: entry.get(key) for key in ("id", "action", "at", "actor")}, "file_sizes": sizes}


def undo(root: Path, entry_id: str | None = None, *, actor: str | None = None,
         dry_run: bool = False, expect_plan: str | None = None) -> dict[str, Any]:
    """Undo `entry_id` (else the newest undoable action); `expect_plan`: see `Plan.confirm`."""
    entry = find_entry(root, entry_id)
    plan = plan_undo(root, entry)
    if dry_run:
        return {"dry_run": True, **plan.describe(root), **entry_about(root, entry, plan)}
    plan.confirm(root, expect_plan)
    applied = apply(root, plan, actor=actor, extra={"undoes": entry["id"]})
    result = {"undone": entry["id"], "journal_id": applied["id"], "restored": plan.summary["restores"]}
    if "message" in plan.summary:
        result["message"] = plan.summary["message"]
    return result


__all__ = ["read_journal", "load", "scan", "interrupted", "find_interrupted", "find_entry", "pick_entry",
           "plan_undo", "undo", "entry_about"]
