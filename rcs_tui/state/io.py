"""Safe file primitives: bounded, non-raising JSON reads and atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import Any

MAX_STATE_BYTES = 8 * 1024 * 1024


def digest(data: bytes) -> str:
    """Content hash used for compare-and-swap checks and the journal."""
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes, or None when it does not exist."""
    try:
        return digest(path.read_bytes())
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "<directory>"


@dataclass(frozen=True)
class JsonRead:
    """Outcome of reading one JSON file: its bytes, parsed object or a one-line error.

    `stat` is the file's stat (the target's, for a symlink that was followed) when it could be taken,
    so callers need no second stat for the mtime.
    """

    path: Path
    exists: bool
    raw: bytes | None = None
    data: Any = None
    error: str | None = None
    stat: os.stat_result | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.exists and self.error is None

    @property
    def sha(self) -> str | None:
        return digest(self.raw) if self.raw is not None else None


def _outside(path: Path, within: Path | None) -> bool:
    if within is None:
        return False
    try:
        path.resolve().relative_to(within.resolve())
    except (ValueError, OSError, RuntimeError):
        return True
    return False


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _read_bytes(path: Path, size: int, max_bytes: int) -> bytes:
    """The file's bytes, stopping once more than `max_bytes` were read (it may have grown since stat)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        chunks = []
        total = 0
        want = min(size, max_bytes) + 1
        while True:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes or len(chunk) < want:  # a short read of a regular file is its end
                break
            want = max(want - len(chunk), 65536)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_json(path: Path, *, within: Path | None = None, expect: type | None = dict,
              max_bytes: int = MAX_STATE_BYTES) -> JsonRead:
    """Read and parse a JSON file without ever raising.

    Problems (missing, unreadable, too large, binary, not UTF-8, invalid or truncated JSON,
    wrong top-level type, a symlink leading outside `within`) come back as `error`.
    One `lstat` per regular file (plus a `stat` for a symlink), then open and read: no other syscalls.
    """
    try:
        st = os.lstat(path)
        if S_ISLNK(st.st_mode):
            if _outside(path, within):
                return JsonRead(path, True, error="symlink leads outside .rcs/; not followed")
            st = os.stat(path)
    except FileNotFoundError:
        return JsonRead(path, False)
    except OSError as exc:
        return JsonRead(path, True, error=f"cannot stat: {exc.strerror or exc}")
    if not S_ISREG(st.st_mode):
        return JsonRead(path, True, error="not a regular file", stat=st)
    if st.st_size > max_bytes:
        return JsonRead(path, True, error=f"too large ({st.st_size} bytes > {max_bytes})", stat=st)
    try:
        raw = _read_bytes(path, st.st_size, max_bytes)
    except FileNotFoundError:
        return JsonRead(path, False)
    except OSError as exc:
        return JsonRead(path, True, error=f"unreadable: {exc.strerror or exc}", stat=st)
    if len(raw) > max_bytes:
        return JsonRead(path, True, raw=None, error=f"too large (> {max_bytes} bytes)", stat=st)
    if b"\x00" in raw:
        return JsonRead(path, True, raw=raw, error="binary content (NUL bytes), not JSON", stat=st)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonRead(path, True, raw=raw, error=f"not UTF-8 (byte {exc.start})", stat=st)
    if not text.strip():
        return JsonRead(path, True, raw=raw, error="empty file (truncated mid-write?)", stat=st)
    try:
        data = json.loads(text)
    except RecursionError:
        return JsonRead(path, True, raw=raw, error="JSON nested too deeply", stat=st)
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        cut = exc.pos >= len(stripped) - 1 or "Unterminated" in exc.msg or stripped[-1:] not in ("}", "]")
        hint = " (truncated mid-write?)" if cut else ""
        return JsonRead(path, True, raw=raw, stat=st,
                        error=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}")
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit conversion limit
        return JsonRead(path, True, raw=raw, error=f"invalid JSON: {str(exc)[:120]}", stat=st)
    if expect is not None and not isinstance(data, expect):
        return JsonRead(path, True, raw=raw, data=data, stat=st,
                        error=f"expected a JSON {'object' if expect is dict else expect.__name__}, "
                              f"got {type(data).__name__}")
    return JsonRead(path, True, raw=raw, data=data, stat=st)


def dump_json(data: Any) -> bytes:
    """Serialise state the way the runtime does (2-space indent, trailing newline, UTF-8)."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def keep_mode(fd: int, path: Path) -> None:
    """Give a temp file the permissions of the file it will replace (0644 for a new one).

    mkstemp creates 0600 files; without this every rewrite (and every undo) would silently narrow a
    runtime file's permissions.
    """
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = 0o644
    os.fchmod(fd, mode)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file in the same directory, fsync, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        keep_mode(fd, path)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def atomic_delete(path: Path) -> None:
    """Remove a file (missing is fine) and make the removal durable."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_dir(path.parent)


def append_line(path: Path, line: str) -> None:
    """Append one line with a single O_APPEND write, starting a new line if the file lacks one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = line.rstrip("\n").encode("utf-8") + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable (best effort)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
