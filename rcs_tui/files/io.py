"""Safe file primitives: the one bounded, non-blocking reader, non-raising JSON reads and atomic writes."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat as stat_mod
import time
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from sys import intern
from typing import Any, Literal

from rcs_tui.core.frozen import Frozen, set_field
from rcs_tui.files.inputs import note, note_resolved

MAX_STATE_BYTES = 8 * 1024 * 1024


def rel_of(root: Path, path: Path | str) -> str:
    """`path` as shown to the operator and checked by the confined tree: relative to `root` when it lies
    under it, else unchanged (an absolute path outside the root stays absolute and is refused where it matters)."""
    if isinstance(path, Path) and isinstance(root, Path):
        # Both already normalised: a path under the root is the root's text, a slash and the rest (the
        # same answer `relative_to` gives, without parsing either again; thousands of plans ask this).
        text, base = str(path), str(root)
        if text[:1] == "/" and base != "/" and text.startswith(base) and text[len(base):len(base) + 1] == "/":
            return text[len(base) + 1:]
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def digest(data: bytes) -> str:
    """Content hash used for compare-and-swap checks and the journal."""
    import hashlib  # on first use: the read-only commands never digest

    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes, None when it does not exist, `<reason>` (never a digest) when it cannot be read.

    Read through the bounded reader, so a FIFO, a device or a huge file answers at once instead of blocking.
    """
    read = read_bounded(path, follow_links=False)
    if not read.exists:
        return None
    if read.raw is None:
        return "<directory>" if read.kind == "directory" else f"<{read.error}>"
    return digest(read.raw)


class BytesRead(Frozen):
    """Outcome of reading one file's bytes: `raw` is None when the file was refused (see `error`).

    `kind` names what was found instead of a regular file ("FIFO", "directory", ...); `truncated` is
    set when a head or tail read left part of the file unread. `stat` is left out of equality, hash
    and repr.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start.
    """

    __slots__ = ("path", "exists", "raw", "error", "stat", "kind", "truncated")
    _compared = ("path", "exists", "raw", "error", "kind", "truncated")
    path: Path
    exists: bool
    raw: bytes | None
    error: str | None
    stat: os.stat_result | None
    kind: str | None
    truncated: bool

    def __init__(self, path: Path, exists: bool, raw: bytes | None = None, error: str | None = None,
                 stat: os.stat_result | None = None, kind: str | None = None, truncated: bool = False) -> None:
        set_field(self, "path", path)
        set_field(self, "exists", exists)
        set_field(self, "raw", raw)
        set_field(self, "error", error)
        set_field(self, "stat", stat)
        set_field(self, "kind", kind)
        set_field(self, "truncated", truncated)


_KINDS = ((stat_mod.S_ISDIR, "directory"), (stat_mod.S_ISFIFO, "FIFO"), (stat_mod.S_ISSOCK, "socket"),
          (stat_mod.S_ISCHR, "character device"), (stat_mod.S_ISBLK, "block device"), (S_ISLNK, "symlink"))


def file_kind(mode: int) -> str:
    """What a non-regular st_mode is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _not_regular(path: Path, st: os.stat_result) -> BytesRead:
    kind = file_kind(st.st_mode)
    return BytesRead(path, True, error=f"not a regular file (a {kind}); not read", stat=st, kind=kind)


_REAL: dict[str, tuple[float, object, str]] = {}  # directory -> (when resolved, its own stat then, where it led)
REAL_TTL_S = 1.0  # a link on the way to it (not the directory itself) retargeted is seen within this long


def _real(directory: str) -> str:
    """Where `directory` leads, with a separator, and noted as an input of what is being read. Resolved
    again when the entry itself changed (`.rcs` a link pointed elsewhere: a new link) and after `REAL_TTL_S`
    (a link further up): a long-running view must never judge reads by where a link used to lead."""
    now = time.monotonic()
    try:
        st = os.lstat(directory)
        own: object = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        own = None
    hit = _REAL.get(directory)
    if hit is None or now - hit[0] >= REAL_TTL_S or hit[1] != own:
        if len(_REAL) >= 64:
            _REAL.clear()
        hit = _REAL[directory] = (now, own, os.path.realpath(directory))
    note_resolved(directory, hit[2])
    return os.path.join(hit[2], "")


def inside(real_path: str, within: Path) -> bool:
    """Whether a resolved path is `within` (resolved) or below it."""
    return (real_path + os.sep).startswith(_real(str(within)))


def opened_path(fd: int, fallback: str) -> str:
    """Where the open file really is (Linux: from /proc, which closes the check-then-open race)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(fallback)


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OUTSIDE = "symlink leads outside .rcs/; not followed"


def read_bounded(path: Path, *, within: Path | None = None, max_bytes: int = MAX_STATE_BYTES,
                 part: Literal["whole", "head", "tail"] = "whole", follow_links: bool = True) -> BytesRead:
    """The one way rcs-tui reads a file: never blocks, never reads more than `max_bytes`, never raises.

    Only regular files are read. The file is opened non-blocking with O_NOFOLLOW (a symlink is first
    resolved and checked, then its target opened the same way) and checked with fstat *after* the open,
    so a FIFO, socket, device or directory swapped in at any moment is refused instead of read. With
    `within`, the opened file must really lie inside that directory (checked on the open descriptor, so
    a symlinked parent directory cannot lead out either). `part="whole"` refuses a file larger than
    `max_bytes`; "head"/"tail" read at most `max_bytes` from its start/end. `follow_links=False`
    refuses a symlink outright.
    """
    spath = os.fspath(path)
    note(spath)  # an input of the answer being built, also when it turns out to be absent
    try:
        st = os.lstat(spath)
    except FileNotFoundError:
        return BytesRead(path, False)
    except OSError as exc:
        return BytesRead(path, True, error=f"cannot stat: {exc.strerror or exc}")
    target = spath
    if S_ISLNK(st.st_mode):
        if not follow_links:
            return BytesRead(path, True, error="is a symlink; not followed", stat=st, kind="symlink")
        target = os.path.realpath(spath)
        if within is not None and not inside(target, within):
            return BytesRead(path, True, error=OUTSIDE, stat=st, kind="symlink")
    elif not S_ISREG(st.st_mode):
        return _not_regular(path, st)
    try:
        fd = os.open(target, _OPEN_FLAGS | _NOFOLLOW)
    except FileNotFoundError:
        return BytesRead(path, False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return BytesRead(path, True, error="became a symlink while being read; not followed", kind="symlink")
        if exc.errno == errno.ENXIO:
            return BytesRead(path, True, error="not a regular file (a socket); not read", kind="socket")
        return BytesRead(path, True, error=f"unreadable: {exc.strerror or exc}")
    try:
        if within is not None:
            try:
                opened = os.fstat(fd)
            except OSError as exc:
                return BytesRead(path, True, error=f"unreadable: {exc.strerror or exc}")
            if S_ISREG(opened.st_mode) and not inside(opened_path(fd, target), within):
                return BytesRead(path, True, error=OUTSIDE, stat=opened)
        return read_fd(fd, path, max_bytes=max_bytes, part=part)
    finally:
        os.close(fd)


def read_fd(fd: int, path: Path, *, max_bytes: int = MAX_STATE_BYTES,
            part: Literal["whole", "head", "tail"] = "whole") -> BytesRead:
    """Read an already opened descriptor under the one rule set: regular files only (checked with fstat
    on the descriptor, so nothing swapped in after a check is read), at most `max_bytes`, never raising.

    Shared by `read_bounded` and the confined tree reader (`fsafe.Tree.read_file`), so a file is refused
    for the same reason, in the same words, whichever way it was reached. The caller closes `fd`.
    """
    st: os.stat_result | None = None
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode):
            return _not_regular(path, st)
        size = st.st_size
        if part == "whole" and size > max_bytes:
            return BytesRead(path, True, error=f"too large ({size} bytes > {max_bytes})", stat=st)
        start = max(0, size - max_bytes) if part == "tail" else 0
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        raw = _read_fd(fd, max_bytes, size - start)
    except OSError as exc:
        return BytesRead(path, True, error=f"unreadable: {exc.strerror or exc}", stat=st)
    cut = len(raw) > max_bytes
    if cut:  # a head read of a larger file, or a file that grew since the fstat
        if part == "whole":
            return BytesRead(path, True, error=f"too large (> {max_bytes} bytes)", stat=st)
        raw = raw[:max_bytes]
    # Cut to the cap, or a tail that starts past the first byte: part of the file was left unread.
    return BytesRead(path, True, raw=raw, stat=st, truncated=cut or start > 0)


def _read_fd(fd: int, max_bytes: int, size: int) -> bytes:
    """Up to `max_bytes + 1` bytes (one more tells the caller the file outgrew the cap).

    The first read asks for one byte more than fstat's size: a shorter answer from a regular file is
    its end, so the common case is a single read.
    """
    want = min(size, max_bytes) + 1
    chunks = []
    total = 0
    while total <= max_bytes:
        chunk = os.read(fd, min(want, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:
            break
        want = 1 << 20
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is too large for a float")
    return value


MAX_JSON_DEPTH = 100
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels"


class NestedTooDeep(ValueError):
    """A JSON document nested deeper than `MAX_JSON_DEPTH`."""


_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
_SCAN = _STRICT.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, absent from its stubs
_JSON_SPACE = " \t\n\r"
SHARED_STRING_MAX = 40


def _shared_strings(data: Any) -> Any:
    """A top-level object with its keys and short text values replaced by one shared copy each.

    Every state file repeats the same field names and a few values (`"active"`, `"current_phase"`,
    `"executing"`): parsed one by one, 100 000 files held a million copies of them, 40 % of a full read's
    memory. Equal strings, so nothing that reads the data can tell."""
    if type(data) is not dict:
        return data
    return {intern(k): (intern(v) if type(v) is str and len(v) <= SHARED_STRING_MAX else v) for k, v in data.items()}


def loads_strict(text: str | bytes, *, share: bool = True) -> Any:
    """`json.loads` as the runtime's JSON: NaN, Infinity and numbers that overflow a float are errors, and so
    is nesting deeper than `MAX_JSON_DEPTH` (NestedTooDeep, a ValueError).

    `share`: a top-level object's keys and short values become shared copies (`_shared_strings`), which pays
    for documents kept by the thousand; a reader that drops each document once judged (the journal's scan)
    says False, as sharing was a third of its parse.

    The depth cap is what lets everything downstream (the sanitiser, the JSON writer, the views) walk a
    document recursively: a file that parses just under the interpreter's recursion limit would otherwise
    end in a RecursionError far from the file that caused it. One decoder serves every call (`json.loads`
    with options builds a new one each time).
    """
    if isinstance(text, (bytes, bytearray)):
        # An object's first two bytes `{"` are what `json.detect_encoding` answers "utf-8" for (no byte order
        # mark, no zero byte): asked only of other starts, as it costs a tenth of a journal line's parse.
        text = text.decode("utf-8" if text[:2] == b'{"' else json.detect_encoding(text), "surrogatepass")
    elif not isinstance(text, str):
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {text.__class__.__name__}")
    try:
        data = _decoded(text)
    except RecursionError:
        raise NestedTooDeep(TOO_DEEP) from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _deeper_than(data, MAX_JSON_DEPTH):
        raise NestedTooDeep(TOO_DEEP)
    return _shared_strings(data) if share else data


def _decoded(text: str) -> Any:
    """`_STRICT.decode(text)`. A text that starts with an object is handed straight to the decoder's scanner,
    the one call `decode` makes after skipping leading whitespace, with the same check that only whitespace
    follows; anything else, and every error, goes through `decode` itself, so its words are the same."""
    if text[:1] == "{":
        try:
            data, end = _SCAN(text, 0)
        except StopIteration:  # a value missing inside: decode says where
            return _STRICT.decode(text)
        if end == len(text) or not text[end:].strip(_JSON_SPACE):
            return data
    return _STRICT.decode(text)


def _deeper_than(data: Any, limit: int) -> bool:
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def lone_surrogate(data: Any) -> int | None:
    """The first lone surrogate (a code point no UTF-8 text can hold) in any key or string of `data`, or None.

    JSON can spell one as an escape (`"\\ud800"`); parsed, it is text that can never be written back as
    UTF-8, so a document holding one is refused where it is read, with the reason, not when a write fails.
    """
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found = _LONE.search(item)
            if found:
                return ord(found.group())
    return None


_LONE = re.compile("[\ud800-\udfff]")


class JsonRead(Frozen):
    """Outcome of reading one JSON file: its bytes, parsed object or a one-line error.

    `stat` is the file's stat (the target's, for a symlink that was followed) when it could be taken,
    so callers need no second stat for the mtime; it is left out of equality, hash and repr.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start.
    """

    __slots__ = ("path", "exists", "raw", "data", "error", "stat")
    _compared = ("path", "exists", "raw", "data", "error")
    path: Path
    exists: bool
    raw: bytes | None
    data: Any
    error: str | None
    stat: os.stat_result | None

    def __init__(self, path: Path, exists: bool, raw: bytes | None = None, data: Any = None,
                 error: str | None = None, stat: os.stat_result | None = None) -> None:
        set_field(self, "path", path)
        set_field(self, "exists", exists)
        set_field(self, "raw", raw)
        set_field(self, "data", data)
        set_field(self, "error", error)
        set_field(self, "stat", stat)

    @property
    def ok(self) -> bool:
        return self.exists and self.error is None

    @property
    def sha(self) -> str | None:
        return digest(self.raw) if self.raw is not None else None

    @property
    def refused(self) -> bool:
        """The file exists but was not read at all (not a regular file, too large, a link out...)."""
        return self.exists and self.raw is None


def read_json(path: Path, *, within: Path | None = None, expect: type | None = dict,
              max_bytes: int = MAX_STATE_BYTES) -> JsonRead:
    """Read (through `read_bounded`) and parse a JSON file without ever raising.

    Problems (missing, not a regular file, unreadable, too large, binary, not UTF-8, invalid or truncated
    JSON, NaN/Infinity, wrong top-level type, a link leading outside `within`) come back as `error`;
    `raw` is None exactly when the file was refused unread.
    """
    return parse_json(read_bounded(path, within=within, max_bytes=max_bytes), expect=expect)


def parse_json(got: BytesRead, *, expect: type | None = dict) -> JsonRead:
    """Parse bytes read by `read_bounded` or the confined tree reader into a `JsonRead` (never raising)."""
    path = got.path
    st = got.stat
    if not got.exists:
        return JsonRead(path, False)
    raw = got.raw
    if raw is None:
        return JsonRead(path, True, error=got.error, stat=st)
    if b"\x00" in raw:
        return JsonRead(path, True, raw=raw, error="binary content (NUL bytes), not JSON", stat=st)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonRead(path, True, raw=raw, error=f"not UTF-8 (byte {exc.start})", stat=st)
    if not text.strip():
        return JsonRead(path, True, raw=raw, error="empty file (truncated mid-write?)", stat=st)
    try:
        data = loads_strict(text)
    except NestedTooDeep:
        return JsonRead(path, True, raw=raw, error=f"JSON {TOO_DEEP}", stat=st)
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        cut = exc.pos >= len(stripped) - 1 or "Unterminated" in exc.msg or stripped[-1:] not in ("}", "]")
        hint = " (truncated mid-write?)" if cut else ""
        return JsonRead(path, True, raw=raw, stat=st,
                        error=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}")
    except ValueError as exc:  # NaN/Infinity, or an integer longer than Python's 4300-digit conversion limit
        return JsonRead(path, True, raw=raw, error=f"invalid JSON: {str(exc)[:120]}", stat=st)
    bad = lone_surrogate(data) if _SURROGATE_ESCAPE.search(raw) else None
    if bad is not None:
        return JsonRead(path, True, raw=raw, data=data, stat=st,
                        error=f"holds text that is not valid Unicode (a lone surrogate escape \\u{bad:04x}); "
                              "not usable as state")
    if expect is not None and not isinstance(data, expect):
        return JsonRead(path, True, raw=raw, data=data, stat=st,
                        error=f"expected a JSON {'object' if expect is dict else expect.__name__}, "
                              f"got {type(data).__name__}")
    return JsonRead(path, True, raw=raw, data=data, stat=st)


def parse_fast(path: Path, raw: bytes, st: os.stat_result | None, expect: type | None = dict) -> JsonRead:
    """`parse_json(BytesRead(path, True, raw=raw, stat=st), expect=expect)`, made cheap for well-formed state.

    A document `plain_object` accepts is the answer; anything else is handed to `parse_json`, which finds
    the reason and words it: the answer is the same either way.
    """
    if expect is dict:
        data = plain_object(raw)
        if data is not None:
            return JsonRead(path, True, raw, data, None, st)
    elif b"\x00" not in raw:
        try:
            text = raw.decode("utf-8")
            data = _shared_strings(_STRICT.decode(text))
        except (ValueError, RecursionError):
            pass
        else:
            if (text.count("[") + text.count("{") <= MAX_JSON_DEPTH and not _SURROGATE_ESCAPE.search(raw)
                    and (expect is None or isinstance(data, expect))):
                return JsonRead(path, True, raw, data, None, st)
    return parse_json(BytesRead(path, True, raw=raw, stat=st), expect=expect)


def plain_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object `raw` holds when it is plainly well-formed state, else None (let `parse_json` judge).

    Plainly well-formed: UTF-8 without lone surrogate escapes, one object by the strict decoder (no NaN, no
    infinite numbers) with only JSON whitespace around it, nested no deeper than the cap (at most that many
    brackets in all, counted when there is more than the object's own brace). The object is exactly what
    `parse_json` gives for the same bytes, with its field names and short values shared the same way. Every
    check is a scan of the bytes or text, and an object is parsed by one scanner call (`_decoded`)."""
    # No NUL check of its own: the strict decoder refuses a NUL byte anywhere in a document.
    if b"\\" in raw and _SURROGATE_ESCAPE.search(raw) is not None:
        return None
    try:
        text = raw.decode("utf-8")
        data = _decoded(text)
    except (ValueError, RecursionError):
        return None
    if type(data) is not dict:
        return None
    # Deeper than the cap takes more brackets than the cap; a lone object's one brace needs no count.
    if (text.find("{", 1) != -1 or "[" in text) and text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        return None
    shared: dict[str, Any] = _shared_strings(data)
    return shared


def dump_json(data: Any) -> bytes:
    """Serialise state the way the runtime does (2-space indent, trailing newline, UTF-8).

    ValueError (with a message for the operator) when the data holds something strict JSON in UTF-8
    cannot carry: NaN/Infinity, or text with a lone surrogate (e.g. from a non-UTF-8 byte on the command line).
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"holds text that is not valid Unicode (a lone surrogate, U+{ord(exc.object[exc.start]):04X}"
                         ", e.g. from a non-UTF-8 byte); nothing was written") from None


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
    import tempfile  # on first use: the read-only commands never write

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
