"""Read many JSON files of one directory through one directory descriptor.

Reading a whole tree of sessions file by file through `read_json` costs an lstat, an open by full path,
an fstat and a `/proc` readlink per file (the confinement check), plus the path arithmetic. A session
directory holds a handful of files, so most of that can be paid once per directory instead:

- the directory is opened once and listed once (`os.scandir` on the descriptor: the entry types come
  from the listing, no stat per entry);
- the confinement check is made once, on the open directory descriptor: a file opened relative to it
  by a single name with O_NOFOLLOW is a direct child, so it lies inside the tree exactly when the
  directory does;
- a name the listing shows as a regular file is opened relative to the descriptor (O_NOFOLLOW,
  O_NONBLOCK), checked with fstat after the open and read under the usual size cap (`read_fd`).
- a subdirectory (a session under `sessions/`) can be opened relative to its parent's descriptor
  (`child`), so its confinement check needs no `/proc` lookup either.

Anything else (a name listed as a symlink, FIFO, directory or device, a name not in the listing, an
open that fails, a directory that cannot be opened or lies outside the tree) goes through `read_json`
itself, so every unusual case is answered by the one reference reader, with the same reason in the
same words. Nothing here raises.
"""

from __future__ import annotations

import os
from collections.abc import Set as AbstractSet
from pathlib import Path
from stat import S_ISREG
from typing import Any

from rcs_tui.files.inputs import note
from rcs_tui.files.io import (
    MAX_STATE_BYTES,
    BytesRead,
    JsonRead,
    inside,
    opened_path,
    parse_fast,
    parse_json,
    plain_object,
    read_fd,
    read_json,
)

_DIR_OPEN = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
_FILE_OPEN = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
              | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FAST = os.open in os.supports_dir_fd and os.scandir in os.supports_fd and bool(getattr(os, "O_NOFOLLOW", 0))


class DirRead:
    """One directory, opened and listed once; `read_json(name)` reads one of its files.

    `names` are its entries in name order (empty when it is missing or cannot be listed), `error` the
    listing's failure (None when it is merely missing), `linked` whether any entry is a symlink. Use as
    a context manager: the descriptor is closed on exit. `listed=False` opens it without listing it (a
    parent whose subdirectories are opened with `child`).
    """

    __slots__ = ("directory", "within", "max_bytes", "names", "linked", "error", "missing", "_fd", "_regular",
                 "_prefix", "_real", "_listed")

    def __init__(self, directory: Path, *, within: Path | None = None, max_bytes: int = MAX_STATE_BYTES,
                 listed: bool = True, _at: tuple[int, str, str, str] | None = None) -> None:
        """`_at` (from `child`): the parent's descriptor and real path, this directory's name in it and its
        path as text (the parent's text plus the name: no second formatting of `directory`)."""
        self.directory = directory
        self.within = within
        self.max_bytes = max_bytes
        self.names: list[str] = []
        self.linked = False
        self.error: str | None = None
        self.missing = False
        self._fd: int | None = None
        self._regular: AbstractSet[str] = frozenset()
        self._real: str | None = None
        self._listed = listed
        spath = os.fspath(directory) if _at is None else _at[3]
        self._prefix = spath if spath.endswith(os.sep) else spath + os.sep  # os.path.join(spath, "")
        note(spath)  # an input of the answer being built, also when it turns out to be absent
        if _FAST:
            self._open(spath, _at)
        elif listed:
            self._list_by_path(spath)

    def child(self, name: str, path: Path | None = None) -> DirRead:
        """The subdirectory `name` (a single name), opened relative to this directory's descriptor with
        O_NOFOLLOW: its real path is this one's plus the name, with no path walk and no `/proc` lookup.
        A name that is a symlink (or anything else the relative open refuses) is opened by its path.
        `path`: `directory / name` when the caller has built it already."""
        path = self.directory / name if path is None else path
        fd, real = self._fd, self._real
        if fd is None or real is None or name in ("", ".", "..") or "/" in name:
            return DirRead(path, within=self.within, max_bytes=self.max_bytes)
        return DirRead(path, within=self.within, max_bytes=self.max_bytes, _at=(fd, real, name, self._prefix + name))

    def _open(self, spath: str, at: tuple[int, str, str, str] | None) -> None:
        fd = real = None
        if at is not None:
            try:
                fd = os.open(at[2], _DIR_OPEN | _NOFOLLOW, dir_fd=at[0])
                # A single name below a directory already found inside the tree is inside it too.
                real = at[1] + at[2] if at[1].endswith(os.sep) else at[1] + os.sep + at[2]  # os.path.join
            except OSError:
                fd = None  # a symlink, gone, not a directory: opened (or refused) by its path below
        if fd is None:
            try:
                fd = os.open(spath, _DIR_OPEN)
            except FileNotFoundError:
                self.missing = True
                return
            except OSError:
                if self._listed:
                    self._list_by_path(spath)  # the listing's own words for why it failed
                return
        if self._listed:
            try:
                with os.scandir(fd) as it:
                    found = list(it)
                try:  # the types come from the listing itself (no syscall) on every Linux file system in use
                    self._regular = {e.name for e in found if e.is_file(follow_symlinks=False)}
                    self.linked = any([e.is_symlink() for e in found])
                except OSError:  # a type the listing left unknown, and the entry vanished before its stat
                    self._regular = {e.name for e in found if _is_regular(e)}
                    self.linked = any([_is_link(e) for e in found])
            except OSError:
                os.close(fd)
                self._regular = frozenset()
                self.linked = False
                self._list_by_path(spath)
                return
            names = [e.name for e in found]
            names.sort()
            self.names = names
        if real is None:
            real = opened_path(fd, spath)
            within = self.within
            if within is not None and not inside(real, within):
                os.close(fd)  # every file would be refused as leading outside: let the reference reader say so
                return
        self._fd = fd
        self._real = real

    def _list_by_path(self, spath: str) -> None:
        try:
            with os.scandir(spath) as it:
                entries = sorted((e.name, _is_link(e)) for e in it)
        except FileNotFoundError:
            self.missing = True
            return
        except OSError as exc:
            self.error = f"cannot list directory: {exc.strerror or exc}"
            return
        self.names = [name for name, _ in entries]
        self.linked = any(link for _, link in entries)

    @property
    def real(self) -> str | None:
        """The real path of the open directory (None when it is not held open)."""
        return self._real if self._fd is not None else None

    def regular(self, name: str) -> bool:
        """Whether the listing showed `name` as a regular file (readable through the held descriptor)."""
        return self._fd is not None and name in self._regular

    def read_json(self, name: str, *, expect: type | None = dict) -> JsonRead:
        """`read_json(directory / name, within=within)`, through the held descriptor when the listing shows
        `name` as a regular file (the common case), through `read_json` itself otherwise."""
        got = self.read_object(name, expect)
        if isinstance(got, tuple):
            return JsonRead(self.directory / name, True, got[1], got[0], None, got[2])
        return got

    def read_object(self, name: str, expect: type | None = dict
                    ) -> tuple[dict[str, Any], bytes, os.stat_result] | JsonRead:
        """`read_json(name, expect=expect)`, with the common answer for an object unwrapped: (data, raw bytes,
        stat) of a regular file of the listing, read through the held descriptor in one go within the cap,
        that holds plainly well-formed state (`plain_object`); a `JsonRead` for anything else (always one
        when `expect` is not dict), the reference reader's own for every unusual file.

        The whole-tree read calls this once per file: the common case builds no path and no record."""
        fd = self._fd
        if fd is None or name not in self._regular:
            return self._reference(name, expect)
        note(self._prefix + name)
        try:
            ffd = os.open(name, _FILE_OPEN, dir_fd=fd)
        except OSError:  # gone, swapped for a symlink or socket, no permission: the reference reader says which
            return self._reference(name, expect)
        try:
            st = os.fstat(ffd)
            size = st.st_size
            # The common case in one read: a regular file within the cap that did not grow since the fstat.
            if S_ISREG(st.st_mode) and size <= self.max_bytes:
                raw = os.read(ffd, size + 1)
                if len(raw) <= size:
                    if expect is not dict:
                        return parse_fast(self.directory / name, raw, st, expect)
                    data = plain_object(raw)
                    if data is not None:
                        return data, raw, st
                    return parse_json(BytesRead(self.directory / name, True, raw=raw, stat=st))
                os.lseek(ffd, 0, os.SEEK_SET)
            got = read_fd(ffd, self.directory / name, max_bytes=self.max_bytes)  # anything else, one rule set
        except OSError:
            got = read_fd(ffd, self.directory / name, max_bytes=self.max_bytes)
        finally:
            os.close(ffd)
        return parse_json(got, expect=expect)

    def _reference(self, name: str, expect: type | None) -> JsonRead:
        return read_json(self.directory / name, within=self.within, expect=expect, max_bytes=self.max_bytes)

    def read_raw(self, name: str) -> tuple[bytes, os.stat_result] | None:
        """The bytes and stat of `name` when `read_json(name)` would read it through the held descriptor in
        one go (a regular file of the listing, within the cap, not growing); None for anything else, which
        only `read_json(name)` answers. For a caller that can tell most files apart without parsing them
        strictly (and parses the others with `parse_fast`)."""
        fd = self._fd
        if fd is None or name not in self._regular:
            return None
        note(self._prefix + name)
        try:
            ffd = os.open(name, _FILE_OPEN, dir_fd=fd)
        except OSError:
            return None
        try:
            st = os.fstat(ffd)
            size = st.st_size
            if not S_ISREG(st.st_mode) or size > self.max_bytes:
                return None
            raw = os.read(ffd, size + 1)
            return (raw, st) if len(raw) <= size else None
        except OSError:
            return None
        finally:
            os.close(ffd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DirRead:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _is_link(entry: os.DirEntry[str]) -> bool:
    """From the listing (no syscall on Linux); an entry that cannot even be stat'ed counts as a link."""
    try:
        return entry.is_symlink()
    except OSError:
        return True


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False
