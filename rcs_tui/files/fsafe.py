"""Confined file operations: every read, write, rename, delete and append rcs-tui makes in its own trees.

A path is walked from the project root one component at a time through directory file descriptors,
each opened with O_NOFOLLOW|O_DIRECTORY, and the last component is opened or renamed relative to the
held directory descriptor. A symlink anywhere on the way (placed there before or swapped in during an
operation) makes the operation fail instead of being followed, and only `.rcs/state`, `.rcs/tasks` and
`.rcs/logs` can be reached at all. Reads are bounded and non-blocking and accept regular files only.

On Linux a file is replaced with `renameat2(RENAME_EXCHANGE)`: our bytes go in and the bytes that were
there come out in one step; if those are not the bytes the change was planned on, the runtime's bytes
are swapped back. That makes "check, then replace" a compare-and-swap instead of two steps with a gap.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import stat
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rcs_tui.core.words import plural

# One content hash, one cap and one descriptor reader: plans, re-checks, the journal and the display agree.
from rcs_tui.files.io import MAX_STATE_BYTES, BytesRead, JsonRead, digest, parse_json, read_fd, rel_of

OWNED = (".rcs/state", ".rcs/tasks", ".rcs/logs")
TEMP_SUFFIX = ".rcs-tui.tmp"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276, "i686": 353, "i386": 353, "armv7l": 382,
                  "ppc64le": 357, "s390x": 347, "riscv64": 276}


class Refused(OSError):
    """A path rcs-tui must not touch: outside its trees, through a symlink, or not a regular file."""

    def __init__(self, rel: str, why: str, kind: str | None = None) -> None:
        super().__init__(errno.EPERM, why, rel)
        self.rel = rel
        self.why = why
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.rel}: {self.why}"


def check_rel(rel: str | os.PathLike[str]) -> tuple[str, ...]:
    """The components of a project-relative path inside the owned trees, or Refused saying why not."""
    text = os.fspath(rel)
    if not isinstance(text, str) or not text or "\x00" in text:
        raise Refused(str(text), "not a usable path")
    try:
        os.fsencode(text)
    except UnicodeError:
        raise Refused(text.encode("utf-8", "backslashreplace").decode("ascii", "replace"),
                      "holds characters no file name can have (a lone surrogate)") from None
    pure = PurePosixPath(text)
    if pure.is_absolute():
        raise Refused(text, "is an absolute path; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed")
    parts = tuple(p for p in pure.parts if p != ".")
    if ".." in parts:
        raise Refused(text, "contains '..'; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed")
    if len(parts) < 3 or "/".join(parts[:2]) not in OWNED:
        raise Refused(text, "is outside .rcs/state, .rcs/tasks and .rcs/logs")
    return parts


# An append-only file an action adds a line to (a task's transcript) may be larger than a state file: undoing
# the line rewrites the file and records its before-image in one journal entry, base64 in a line the journal
# reader takes up to 64 MiB, so 32 MiB is the most that can still be undone.
MAX_APPENDED_BYTES = 32 * 1024 * 1024


def max_bytes_for(rel: str) -> int:
    """The most of a file a plan or its undo may read: a state file's cap for `.json`, else an appended file's."""
    return MAX_STATE_BYTES if rel.endswith(".json") else MAX_APPENDED_BYTES


def _explain(exc: OSError, rel: str, what: str) -> Refused:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return Refused(rel, f"{what} is a symlink or not a directory; not followed")
    raise exc


class Tree:
    """The project root held as a directory descriptor; every operation is confined to the owned trees."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @contextlib.contextmanager
    def dir(self, rel_dir: tuple[str, ...], *, create: bool = False, shown: str = "") -> Iterator[int]:
        """A descriptor of directory `rel_dir` (components), reached without following any link."""
        fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            for i, part in enumerate(rel_dir):
                try:
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    made = True
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                    except FileExistsError:
                        made = False
                    except OSError as exc:  # named by its project-relative path, not its last component
                        raise OSError(exc.errno, exc.strerror, "/".join(rel_dir[: i + 1])) from None
                    try:
                        nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    except OSError as exc:
                        raise _explain(exc, shown or "/".join(rel_dir), "/".join(rel_dir[: i + 1])) from None
                    if made:  # the project's owner's, like the directory it was made in
                        owned_like(nfd, os.fstat(fd))
                except OSError as exc:
                    raise _explain(exc, shown or "/".join(rel_dir), "/".join(rel_dir[: i + 1])) from None
                os.close(fd)
                fd = nfd
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def parent(self, rel: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
        """(descriptor of the file's directory, file name) for an owned project-relative path."""
        parts = check_rel(rel)
        with self.dir(parts[:-1], create=create, shown=rel) as fd:
            yield fd, parts[-1]

    def read_file(self, rel: str, max_bytes: int = MAX_STATE_BYTES) -> BytesRead:
        """The one reader for files rcs-tui may change, never raising for what it refuses.

        The same walk and rules as every write (no link at any step, regular files only, `max_bytes`),
        so whatever a plan is built on is exactly what the apply step can read again; the refusal reason
        is in `error`, worded as `read_bounded` words it.
        """
        path = self.root / rel
        try:
            with self.parent(rel) as (dfd, name):
                fd = open_leaf(dfd, name, os.O_RDONLY, rel)
                try:
                    return read_fd(fd, path, max_bytes=max_bytes)
                finally:
                    os.close(fd)
        except FileNotFoundError:
            return BytesRead(path, False)
        except Refused as exc:
            return BytesRead(path, True, error=exc.why, kind=exc.kind)
        except OSError as exc:
            return BytesRead(path, True, error=f"unreadable: {exc.strerror or exc}")

    def read(self, rel: str, max_bytes: int = MAX_STATE_BYTES) -> bytes | None:
        """The file's bytes (None: absent); Refused (with `read_file`'s reason) for anything it refuses."""
        got = self.read_file(rel, max_bytes)
        if not got.exists:
            return None
        if got.raw is None:
            raise Refused(rel, got.error or "not read", got.kind)
        return got.raw

    def read_json(self, path: Path | str, expect: type | None = dict) -> JsonRead:
        """`read_file` + the strict JSON parse, for the files a plan is built on (`path`: under the root)."""
        return parse_json(self.read_file(rel_of(self.root, path)), expect=expect)

    def lstat(self, rel: str) -> os.stat_result | None:
        """The entry's own stat (links not followed), None when absent; Refused when the way crosses a link."""
        try:
            with self.parent(rel) as (dfd, name):
                return os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def append(self, rel: str, data: bytes) -> tuple[int, bytes]:
        """Append `data` (fsynced) to a regular file, on a new line; returns (old size, bytes written).

        A failed write is cut off again, so no torn line is left behind.
        """
        with self.parent(rel, create=True) as (dfd, name):
            fd = open_leaf(dfd, name, os.O_RDWR | os.O_APPEND | os.O_CREAT, rel)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise Refused(rel, "is not a regular file; not written")
                start = st.st_size
                if start and os.pread(fd, 1, start - 1) != b"\n":
                    data = b"\n" + data
                try:
                    write_all(fd, data)
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):  # leave no torn line behind
                        os.ftruncate(fd, start)
                    raise
                if not start:  # a file just made (a new journal, a transcript): its name is durable too
                    fsync_fd(dfd)
                return start, data
            finally:
                os.close(fd)


def open_leaf(dfd: int, name: str, flags: int, rel: str, mode: int = 0o644) -> int:
    """os.open of a file in a held directory that never follows a link at the last step (Refused instead).

    Opened for writing, a regular file with another hard link is refused too: that other name may lie
    outside rcs-tui's trees, and writing through this one would change it.
    """
    try:
        fd = os.open(name, flags | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), mode,
                     dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(rel, "is a symlink; not followed", "symlink") from None
        if exc.errno == errno.ENXIO:
            raise Refused(rel, "not a regular file (a socket); not read", "socket") from None
        if exc.errno == errno.EWOULDBLOCK:
            raise Refused(rel, "not a regular file; not read") from None
        raise
    if flags & (os.O_WRONLY | os.O_RDWR):
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            os.close(fd)
            raise Refused(rel, f"has {plural(st.st_nlink - 1, 'other hard link')}, possibly outside .rcs; not written")
        if flags & os.O_CREAT and stat.S_ISREG(st.st_mode) and st.st_size == 0 and st.st_uid == os.geteuid():
            owned_like(fd, os.fstat(dfd))  # one just made (a journal, a transcript): the directory's owner's
    return fd


def read_at(dfd: int, name: str, rel: str, max_bytes: int = MAX_STATE_BYTES) -> bytes:
    """Bounded read of a regular file in a held directory, without following a link or blocking on a FIFO."""
    fd = open_leaf(dfd, name, os.O_RDONLY, rel)
    try:
        got = read_fd(fd, Path(rel), max_bytes=max_bytes)
    finally:
        os.close(fd)
    if got.raw is None:
        raise Refused(rel, got.error or "not read", got.kind)
    return got.raw


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a short write near a size limit is followed by the real error)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[n:]


def temp_name(name: str) -> str:
    return f".{name}.{uuid.uuid4().hex[:10]}{TEMP_SUFFIX}"


def owned_like(fd: int, like: os.stat_result) -> None:
    """Give the file or directory open at `fd` the owner and group of `like` when they are not ours and we
    may (only root may give a file away): rcs-tui run with sudo in a user's project leaves that user's
    files theirs, so the runtime can still rewrite them in place. Anyone else keeps what they create."""
    if (like.st_uid, like.st_gid) == (os.geteuid(), os.getegid()):
        return
    with contextlib.suppress(OSError):
        os.fchown(fd, like.st_uid, like.st_gid)


def _owner_for(dfd: int, name: str) -> os.stat_result:
    """Whose a file put at `name` should be: the regular file there now, else the directory's."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            return st
    except OSError:
        pass
    return os.fstat(dfd)


def stage(dfd: int, name: str, data: bytes, mode: int = 0o644) -> str:
    """A fsynced temp file holding `data` beside `name` in the held directory; returns its name. It has the
    owner of the file it will replace (of the directory for a new one) where we may set it (`owned_like`)."""
    tmp = temp_name(name)
    like = _owner_for(dfd, name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode,
                 dir_fd=dfd)
    try:
        owned_like(fd, like)  # before the mode: a change of owner clears set-id bits
        os.fchmod(fd, mode)
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    os.close(fd)
    return tmp


def mode_of(dfd: int, name: str) -> int:
    """Permissions of the file a temp will replace (0644 for a new one), so rewrites never narrow them."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return 0o644
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o644


def fsync_fd(dfd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(dfd)


# --- renameat2 -------------------------------------------------------------------------------------------

def _load_renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    if platform.system() != "Linux":
        return None
    libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded; no ldconfig subprocess
    func = getattr(libc, "renameat2", None)
    if func is not None:
        func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        func.restype = ctypes.c_int
        return func  # type: ignore[no-any-return]
    number = _SYS_RENAMEAT2.get(platform.machine())
    if number is None:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long

    def via_syscall(a: int, b: bytes, c: int, d: bytes, flags: int) -> int:
        return int(syscall(ctypes.c_long(number), ctypes.c_int(a), ctypes.c_char_p(b), ctypes.c_int(c),
                           ctypes.c_char_p(d), ctypes.c_uint(flags)))

    return via_syscall


_renameat2 = _load_renameat2()
_exchange_works = _renameat2 is not None


def renameat2(dfd: int, src: str, dst: str, flags: int) -> None:
    """renameat2(2) within one directory; OSError on failure (ENOSYS/EINVAL when unsupported)."""
    if _renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    rc = _renameat2(dfd, os.fsencode(src), dfd, os.fsencode(dst), flags)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), dst)


def _unsupported(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP)


@dataclass(frozen=True)
class SwapResult:
    """Outcome of a compare-and-swap: applied, or refused with the digest actually found (None: absent)."""

    applied: bool
    found: str | None


def _same_inode(dfd: int, name: str, ino: int) -> bool:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == ino
    except OSError:
        return False


def swap_in(dfd: int, name: str, tmp: str, expect: str | None, rel: str) -> SwapResult:
    """Put the staged `tmp` at `name` only if `name` holds bytes with digest `expect` (None: absent).

    Linux: RENAME_NOREPLACE for an expected-absent file; otherwise RENAME_EXCHANGE, then the swapped-out
    bytes are checked and, if they are not the expected ones, swapped back (unless something newer
    already replaced ours, which then stands). Elsewhere: read, compare, rename (a short gap remains).
    `tmp` is consumed either way.
    """
    global _exchange_works
    if expect is None:
        if _renameat2 is not None:
            try:
                renameat2(dfd, tmp, name, _RENAME_NOREPLACE)
                return SwapResult(True, None)
            except FileExistsError:
                found = _digest_at(dfd, name, rel)
                discard_temp(dfd, tmp)
                return SwapResult(False, found)
            except OSError as exc:
                if not _unsupported(exc):
                    discard_temp(dfd, tmp)
                    raise
        return _swap_plain(dfd, name, tmp, expect, rel)
    if _exchange_works:
        ours = os.stat(tmp, dir_fd=dfd, follow_symlinks=False).st_ino
        try:
            renameat2(dfd, tmp, name, _RENAME_EXCHANGE)
        except FileNotFoundError:
            discard_temp(dfd, tmp)
            return SwapResult(False, None)
        except OSError as exc:
            if not _unsupported(exc):
                discard_temp(dfd, tmp)
                raise
            _exchange_works = False
            return _swap_plain(dfd, name, tmp, expect, rel)
        # `tmp` now holds what was at `name` an instant ago.
        try:
            found = _digest_at(dfd, tmp, rel)
        except Refused:
            found = "<not a regular file>"
        except BaseException:  # could not look: put the previous bytes back before giving up
            if _same_inode(dfd, name, ours):
                renameat2(dfd, tmp, name, _RENAME_EXCHANGE)
            discard_temp(dfd, tmp)
            raise
        if found == expect:
            discard_temp(dfd, tmp)
            return SwapResult(True, found)
        if _same_inode(dfd, name, ours):
            renameat2(dfd, tmp, name, _RENAME_EXCHANGE)  # give the runtime its bytes back
            discard_temp(dfd, tmp)
        else:  # something newer replaced ours already; it stands, the older bytes in tmp are superseded
            discard_temp(dfd, tmp)
        return SwapResult(False, found)
    return _swap_plain(dfd, name, tmp, expect, rel)


def _swap_plain(dfd: int, name: str, tmp: str, expect: str | None, rel: str) -> SwapResult:
    try:
        found = _digest_at(dfd, name, rel)
    except BaseException:
        discard_temp(dfd, tmp)
        raise
    if found != expect:
        discard_temp(dfd, tmp)
        return SwapResult(False, found)
    try:
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        discard_temp(dfd, tmp)
        raise
    return SwapResult(True, found)


def remove_if(dfd: int, name: str, expect: str, rel: str) -> SwapResult:
    """Delete `name` only if it holds bytes with digest `expect`.

    The file is first renamed aside (atomically taking it out of the runtime's way), its bytes checked,
    and only then unlinked; if they are not the expected ones it is renamed back (never over a file the
    runtime created meanwhile, which stands).
    """
    aside = temp_name(name)
    try:
        if _renameat2 is not None:
            try:
                renameat2(dfd, name, aside, _RENAME_NOREPLACE)
            except OSError as exc:
                if not _unsupported(exc):
                    raise
                os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
        else:
            os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
    except FileNotFoundError:
        return SwapResult(False, None)
    try:
        found = _digest_at(dfd, aside, rel)
    except Refused:
        found = "<not a regular file>"
    except BaseException:  # could not look: put the file back before giving up
        _put_back(dfd, aside, name)
        raise
    if found == expect:
        discard_temp(dfd, aside)
        return SwapResult(True, found)
    _put_back(dfd, aside, name)
    return SwapResult(False, found)


def _put_back(dfd: int, aside: str, name: str) -> None:
    """Rename a file set aside back to its name, never over a file created there meanwhile (which stands)."""
    try:
        if _renameat2 is not None:
            try:
                renameat2(dfd, aside, name, _RENAME_NOREPLACE)
                return
            except OSError as exc:
                if not _unsupported(exc):
                    raise
        os.rename(aside, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except FileExistsError:
        discard_temp(dfd, aside)


def _digest_at(dfd: int, name: str, rel: str) -> str | None:
    try:
        return digest(read_at(dfd, name, rel, max_bytes_for(rel)))
    except FileNotFoundError:
        return None


def discard_temp(dfd: int, name: str) -> None:
    """Remove our own temp file `name` (staged bytes, or what a swap set aside) in the held directory.

    Never raises: by the time a temp is discarded the step it served has been decided (applied or not),
    and a failure to clean up must not turn that answer into an error (a swap reported as failed after
    it took effect is rolled back wrongly). What stays behind is a leftover temp the doctor lists; the
    journal entry holds the before-image of anything a temp kept."""
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dfd)


def rename_within(dfd: int, src: str, dst: str) -> bool:
    """Rename `src` to `dst` inside the held directory (no path is resolved again); False when `src` is gone."""
    try:
        os.rename(src, dst, src_dir_fd=dfd, dst_dir_fd=dfd)
    except FileNotFoundError:
        return False
    return True


def leftover_temps(root: Path) -> list[str]:
    """rcs-tui's own temp files left by a killed write, as project-relative paths (links never followed).

    Each owned tree's top is reached by the confined walk once; every directory below it is opened from its
    parent's descriptor without following a link (ten thousand session directories cost one open each)."""
    out: list[str] = []
    tree = Tree(root)
    for base in OWNED:
        top = tuple(base.split("/"))
        try:
            with tree.dir(top) as base_fd:
                _temps_below(base_fd, top, out)
        except (OSError, Refused):
            continue
    return sorted(out)


def _temps_below(base_fd: int, top: tuple[str, ...], out: list[str]) -> None:
    """The temp files in the held directory and every directory below it, depth first. A directory stays
    open while its subdirectories are opened from it: one descriptor a level, all closed on the way out."""
    held: list[tuple[tuple[str, ...], int, list[str]]] = []
    try:
        fd = os.dup(base_fd)
        held.append(((), fd, []))
        held[-1] = ((), fd, _temps_in(fd, top, (), out))
        while held:
            parts, fd, pending = held[-1]
            if not pending:
                held.pop()
                os.close(fd)
                continue
            name = pending.pop()
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            held.append(((*parts, name), child, []))
            try:
                held[-1] = ((*parts, name), child, _temps_in(child, top, (*parts, name), out))
            except OSError:
                continue  # unlisted: closed as a directory with nothing below it
    finally:
        for _, fd, _ in held:
            os.close(fd)


def _temps_in(fd: int, top: tuple[str, ...], parts: tuple[str, ...], out: list[str]) -> list[str]:
    """The names of the directory's subdirectories (links not followed); its temp files go to `out`."""
    below = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                below.append(entry.name)
            elif entry.name.endswith(TEMP_SUFFIX) and entry.is_file(follow_symlinks=False):
                out.append("/".join((*top, *parts, entry.name)))
    return below


def remove_temp(root: Path, rel: str) -> None:
    if not rel.endswith(TEMP_SUFFIX):
        raise Refused(rel, "is not an rcs-tui temp file")
    with Tree(root).parent(rel) as (dfd, name):
        with contextlib.suppress(FileNotFoundError):  # the doctor's repair: a failure is its answer
            os.unlink(name, dir_fd=dfd)
        fsync_fd(dfd)
