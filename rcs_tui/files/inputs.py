"""What an answer was built from: every path read, listed or only checked for existence, and every process
checked for liveness, while a `Recorder` is active.

The readers look at the disk only through this module and `files.io` (which notes each path it reads
here), so a cached answer (the status line's) can be checked against exactly its inputs: a file that was
absent and now exists, a directory that gained an entry, a rewrite of the same size with its mtime put
back (the ctime still moves), a worker that died. A path is recorded with its ancestors up to the
recorder's top directory, because whether a path exists is decided by its parent's entries.
"""

from __future__ import annotations

import os
from _thread import _local

from rcs_tui.files.host import pid_alive, pid_start_ticks

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `hud --once` answers from its cache without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Protocol, Self

    class DirEntries(Protocol):
        """What `os.scandir` returns: an iterator of a directory's entries that is also a context manager
        closing the directory (typeshed's own `os._ScandirIterator` is private)."""

        def __iter__(self) -> Self: ...
        def __next__(self) -> os.DirEntry[str]: ...
        def __enter__(self) -> Self: ...
        def __exit__(self, *args: object) -> None: ...
        def close(self) -> None: ...

Signature = list[int] | None


def signature(path: str, ctime: bool = True) -> Signature:
    """inode, size, mtime_ns, ctime_ns (following a symlink), or None when the path does not exist.

    `ctime=False` for rp1's WAL: SQLite itself truncates an empty WAL when a reader closes, which moves its
    ctime without changing a byte (the database file's own ctime moves only with a write, so it is kept:
    a commit of the same size whose mtime was put back still shows there).
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not ctime:
        return [st.st_ino, st.st_size, st.st_mtime_ns]
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def process_print(pid: int) -> list[object]:
    """What an answer assumed about a process: alive or not, and which process (its start time)."""
    alive = pid_alive(pid)
    return [pid, alive, pid_start_ticks(pid) if alive else None]


class Recorder:
    """The inputs of one build: each path's signature and each process's print, taken when first looked at
    (before it is read), so a change made during the build makes the record differ from the disk, never
    the other way round. Only paths under `prefixes` are recorded (the project's trees)."""

    def __init__(self, prefixes: tuple[str, ...], top: str) -> None:
        self.prefixes = prefixes
        self.top = top  # ancestors are recorded up to (and including) this directory
        self.inputs: dict[str, Signature] = {}
        self.pids: dict[int, list[object]] = {}
        self.resolved: dict[str, str] = {}  # a path as given -> where its links led (`realpath`)

    def path(self, path: str) -> None:
        if not any(path == p or path.startswith(p + os.sep) for p in self.prefixes):
            return
        while path not in self.inputs:
            self.inputs[path] = signature(path)
            if path == self.top or len(path) <= len(self.top):
                break
            path = os.path.dirname(path)

    def pid(self, pid: int) -> None:
        if pid not in self.pids:
            self.pids[pid] = process_print(pid)


_ACTIVE: list[Recorder] = []


class recording:  # noqa: N801 - used as a context manager, like open()
    """`with recording(rec):` every look at the disk made by the readers in this thread is noted in `rec`."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def __enter__(self) -> Recorder:
        _ACTIVE.append(self.recorder)
        return self.recorder

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self.recorder)


def note(path: str | os.PathLike[str]) -> None:
    """Record `path` as an input of the answer being built (nothing when no recorder is active)."""
    if _ACTIVE:
        try:
            _ACTIVE[-1].path(os.path.abspath(os.fspath(path)))
        except (TypeError, ValueError):
            pass


def realpath(path: str | os.PathLike[str]) -> str:
    """`os.path.realpath`, noted as an input of the answer being built: where a link leads (anywhere, inside
    the project or not, or from the process's directory for a relative path) decides what is read, and
    retargeting a link changes no file the answer read. `resolved_unchanged` checks it again."""
    out = os.path.realpath(path)
    note_resolved(path, out)
    return out


def note_resolved(path: str | os.PathLike[str], out: str) -> None:
    """Note that `path` led to `out` (resolved by the caller, say from a short-lived cache), as `realpath`
    notes it."""
    if _ACTIVE:
        _ACTIVE[-1].resolved.setdefault(os.fspath(path), out)
    stack = getattr(_NOTING, "stack", None)
    if stack:
        for seen in stack:
            seen.setdefault(os.fspath(path), out)


def now_of(key: int | str) -> object:
    """What a `noting_processes` key shows now: a process's print (a pid), or where a path leads (a path)."""
    return process_print(key) if isinstance(key, int) else os.path.realpath(key)


def resolved_unchanged(resolved: list[list[str]]) -> bool:
    """Does every path a build resolved (`realpath`) still lead where it led?"""
    return all(os.path.realpath(path) == out for path, out in resolved)


_NOTING = _local()  # per thread: the maps `noting_processes` blocks note processes in, innermost last


class noting_processes:  # noqa: N801 - used as a context manager, like open()
    """`with noting_processes() as seen:` each process the readers in this thread ask about is noted in
    `seen` (pid -> `process_print`), and each path they resolve (path -> where it led, `realpath`), as first
    seen: a live view asks again later whether any of them started, stopped or leads elsewhere, which no
    file change would tell it (`now_of`)."""

    def __init__(self) -> None:
        self.seen: dict[int | str, object] = {}

    def __enter__(self) -> dict[int | str, object]:
        stack = getattr(_NOTING, "stack", None)
        if stack is None:
            stack = _NOTING.stack = []
        stack.append(self.seen)
        return self.seen

    def __exit__(self, *exc: object) -> None:
        _NOTING.stack.remove(self.seen)


def alive(pid: int) -> bool:
    """Whether process `pid` exists, recorded as an input (and noted by any `noting_processes` block)."""
    if _ACTIVE:
        _ACTIVE[-1].pid(pid)
    stack = getattr(_NOTING, "stack", None)
    if stack:
        for seen in stack:
            if pid not in seen:
                seen[pid] = process_print(pid)
    return pid_alive(pid)


def exists(path: str | os.PathLike[str]) -> bool:
    note(path)
    return os.path.exists(path)


def is_dir(path: str | os.PathLike[str]) -> bool:
    note(path)
    return os.path.isdir(path)


def is_symlink(path: str | os.PathLike[str]) -> bool:
    note(path)
    return os.path.islink(path)


def is_file(path: str | os.PathLike[str]) -> bool:
    note(path)
    return os.path.isfile(path)


def mtime(path: str | os.PathLike[str]) -> float | None:
    """The file's mtime in seconds, or None when it cannot be stat'ed."""
    note(path)
    try:
        return os.stat(path).st_mtime
    except (OSError, ValueError):
        return None


def stat(path: str | os.PathLike[str]) -> os.stat_result:
    note(path)
    return os.stat(path)


def listdir(path: str | os.PathLike[str]) -> list[str]:
    note(path)
    return os.listdir(path)


def scandir(path: str | os.PathLike[str]) -> DirEntries:
    """`os.scandir` (a context manager too), with the directory recorded."""
    note(path)
    return os.scandir(os.fspath(path))


# -- the compact record --------------------------------------------------------------------------
def _digest(stamps: Iterable[Iterable[int]]) -> str:
    """One digest of a sequence of (inode, size, mtime_ns, ctime_ns) stamps, in their order."""
    from array import array
    from hashlib import blake2b
    from itertools import chain

    flat = array("q", chain.from_iterable(stamps))
    return blake2b(flat.tobytes(), digest_size=16).hexdigest()


def compact(inputs: dict[str, Signature], base: str) -> dict[str, object]:
    """The record of `inputs` in a size that grows with the number of directories, not of files.

    A path whose parent directory is also recorded is grouped under that directory: the record keeps the
    directory (relative to `base`) and the sorted names looked at in it (each distinct list of names once:
    every session directory usually holds the same files), and one digest over the signatures of every
    grouped path that existed, in the record's order. Grouped paths that were absent are listed the same
    way and must still be absent. Everything else (the tops of the tree, rp1's database and WAL, whose
    signatures leave out the ctime) is kept path by path. `unchanged` stats exactly the paths the full
    record would: a compact record misses exactly when the full one would.
    """
    present: dict[str, list[str]] = {}
    absent: dict[str, list[str]] = {}
    explicit: list[list[object]] = []
    for path, sig in inputs.items():
        parent, name = os.path.split(path)
        if name and parent in inputs and (sig is None or len(sig) == 4):
            (present if sig is not None else absent).setdefault(parent, []).append(name)
        else:
            explicit.append([path, sig])
    patterns: dict[tuple[str, ...], int] = {}
    stamps: list[Iterable[int]] = []

    def grouped(groups: dict[str, list[str]], collect: bool) -> list[list[object]]:
        out: list[list[object]] = []
        for parent in sorted(groups):
            names = tuple(sorted(groups[parent]))
            out.append([os.path.relpath(parent, base), patterns.setdefault(names, len(patterns))])
            if collect:
                stamps.extend(inputs[os.path.join(parent, n)] or () for n in names)
        return out

    dirs, gone = grouped(present, True), grouped(absent, False)
    return {"base": base, "paths": sorted(explicit, key=lambda row: str(row[0])), "dirs": dirs, "gone": gone,
            "names": [list(p) for p in patterns], "digest": _digest(stamps)}


def _expand(base: str, rows: list[list[object]], names: list[list[str]]) -> list[str]:
    """The full paths of a record's grouped rows ([directory relative to base, index into names])."""
    out: list[str] = []
    for rel, index in rows:
        if not isinstance(rel, str) or not isinstance(index, int):
            raise TypeError("malformed record")
        parent = os.path.join(base, rel) + os.sep
        out.extend([parent + n for n in names[index]])
    return out


def unchanged(record: dict[str, Any]) -> bool:
    """Does every path of a `compact` record still have the signature it had (absent ones still absent)?

    Raises ValueError/TypeError/KeyError/IndexError on a malformed record (the caller treats it as a miss).
    """
    import operator

    base, names = str(record["base"]), record["names"]
    for path, sig in record["paths"]:
        if signature(path, sig is None or len(sig) == 4) != sig:
            return False
    for path in _expand(base, record["gone"], names):
        if signature(path) is not None:
            return False
    stamp = operator.attrgetter("st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
    try:
        digest = _digest(map(stamp, map(os.stat, _expand(base, record["dirs"], names))))
    except OSError:  # a path that existed is gone (or no longer reachable)
        return False
    return bool(digest == record["digest"])
