"""Safe file primitives: bounded, non-raising JSON reads and atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
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
    """Outcome of reading one JSON file: its bytes, parsed object or a one-line error."""

    path: Path
    exists: bool
    raw: bytes | None = None
    data: Any = None
    error: str | None = None

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


def read_json(path: Path, *, within: Path | None = None, expect: type | None = dict,
              max_bytes: int = MAX_STATE_BYTES) -> JsonRead:
    """Read and parse a JSON file without ever raising.

    Problems (missing, unreadable, too large, binary, not UTF-8, invalid or truncated JSON,
    wrong top-level type, a symlink leading outside `within`) come back as `error`.
    """
    try:
        if path.is_symlink() and _outside(path, within):
            return JsonRead(path, True, error="symlink leads outside .rcs/; not followed")
        st = path.stat()
    except FileNotFoundError:
        return JsonRead(path, False)
    except OSError as exc:
        return JsonRead(path, True, error=f"cannot stat: {exc.strerror or exc}")
    if not path.is_file():
        return JsonRead(path, True, error="not a regular file")
    if st.st_size > max_bytes:
        return JsonRead(path, True, error=f"too large ({st.st_size} bytes > {max_bytes})")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return JsonRead(path, False)
    except OSError as exc:
        return JsonRead(path, True, error=f"unreadable: {exc.strerror or exc}")
    if len(raw) > max_bytes:
        return JsonRead(path, True, raw=None, error=f"too large (> {max_bytes} bytes)")
    if b"\x00" in raw:
        return JsonRead(path, True, raw=raw, error="binary content (NUL bytes), not JSON")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonRead(path, True, raw=raw, error=f"not UTF-8 (byte {exc.start})")
    if not text.strip():
        return JsonRead(path, True, raw=raw, error="empty file (truncated mid-write?)")
    try:
        data = json.loads(text)
    except RecursionError:
        return JsonRead(path, True, raw=raw, error="JSON nested too deeply")
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        cut = exc.pos >= len(stripped) - 1 or "Unterminated" in exc.msg or stripped[-1:] not in ("}", "]")
        hint = " (truncated mid-write?)" if cut else ""
        return JsonRead(path, True, raw=raw,
                        error=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}")
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit conversion limit
        return JsonRead(path, True, raw=raw, error=f"invalid JSON: {str(exc)[:120]}")
    if expect is not None and not isinstance(data, expect):
        return JsonRead(path, True, raw=raw, data=data,
                        error=f"expected a JSON {'object' if expect is dict else expect.__name__}, "
                              f"got {type(data).__name__}")
    return JsonRead(path, True, raw=raw, data=data)


def dump_json(data: Any) -> bytes:
    """Serialise state the way the runtime does (2-space indent, trailing newline, UTF-8)."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file in the same directory, fsync, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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
