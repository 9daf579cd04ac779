"""rcs-tui's own cache files under `$XDG_CACHE_HOME/rcs-tui/`: read only when ours, written atomically.

Nothing here is state: every cache file can be deleted at any time. A file is read only when it and
its directory belong to the current user and are writable by nobody else (another user could have put
anything there), and is replaced in one `rename`, so a reader sees the old file or the new one, never
half of one. Callers validate the content itself; an unreadable file is simply a miss. One size limit
(`MAX_BYTES`) holds both ways: what is larger is never read, so it is never written either (writing a
file no reader takes would only cost time and disk, on every call).
"""

from __future__ import annotations

import os
import stat
import zlib

MAX_BYTES = 16 * 1024 * 1024  # the one size limit of a cache file, on write and on read
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir() -> str:
    """`$XDG_CACHE_HOME/rcs-tui` (an absolute XDG_CACHE_HOME only, as the XDG spec says), else `~/.cache/rcs-tui`."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rcs-tui")


def state_dir() -> str:
    """`$XDG_STATE_HOME/rcs-tui` (an absolute XDG_STATE_HOME only, as the XDG spec says), else
    `~/.local/state/rcs-tui`: rcs-tui's own small records that outlive a cache (the serve token, what this
    user last looked at, acknowledgements, which projects a console shows)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rcs-tui")


def _ours(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


def read_own(path: str, max_bytes: int | None = None) -> bytes | None:
    """The file's bytes when it is a regular file we own in a directory we own, of at most `max_bytes`
    (default `MAX_BYTES`); else None."""
    limit = MAX_BYTES if max_bytes is None else max_bytes
    try:
        if not _ours(os.lstat(os.path.dirname(path))):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _ours(st) or st.st_size > limit:
            return None
        return os.read(fd, st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_own(path: str, data: bytes, max_bytes: int | None = None) -> bool:
    """Replace `path` with `data` atomically (a private temp file, then rename); False when it could not, or
    when `data` is larger than `max_bytes` (default `MAX_BYTES`, what `read_own` takes): nothing is written."""
    if len(data) > (MAX_BYTES if max_bytes is None else max_bytes):
        return False
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
        if not stat.S_ISDIR(st.st_mode) or not _ours(st):
            return False
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def code_stamp() -> int:
    """The one version stamp of rcs-tui's code: a checksum of the path, size and mtime of every file of the
    installed package (compiled caches left out).

    Every cache (the status line's answers, the kept rp1 statuses, the checked config) is keyed on it: any
    module can change an answer, so an edited install (one module or many, through an editor that
    rewrites in place or by rename) never serves answers built by older code. One scandir per package
    directory and one stat per file: a fraction of a millisecond.
    """
    rows: list[str] = []
    stack = [PACKAGE_DIR]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            stack.append(entry.path)
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                rows.append(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}")
    rows.sort()
    return zlib.crc32("\n".join(rows).encode("utf-8", "surrogateescape"))
