"""The one bounded reader and the strict JSON parse: what each kind of bad file reads as, in the words the
operator sees, and what the atomic writers leave on disk."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import stat
from pathlib import Path

import pytest

from rcs_tui.files import io
from rcs_tui.files.io import (
    BytesRead,
    NestedTooDeep,
    append_line,
    atomic_write,
    digest,
    dump_json,
    file_digest,
    file_kind,
    fsync_dir,
    loads_strict,
    lone_surrogate,
    parse_fast,
    parse_json,
    read_bounded,
    read_json,
    rel_of,
)


def test_an_empty_file_reads_as_truncated_mid_write(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"  \n")
    got = read_json(path)
    assert (got.exists, got.raw, got.data, got.error) == (True, b"  \n", None, "empty file (truncated mid-write?)")


def test_paths_are_shown_relative_to_the_root_when_under_it(tmp_path: Path) -> None:
    assert rel_of(tmp_path, tmp_path / ".rcs/state/a.json") == ".rcs/state/a.json"
    assert rel_of(tmp_path, ".rcs/state/a.json") == ".rcs/state/a.json"
    assert rel_of(tmp_path, "/elsewhere/a.json") == "/elsewhere/a.json"
    assert rel_of(tmp_path, str(tmp_path / "x")) == "x"


def test_digest_is_the_sha256_of_the_bytes() -> None:
    assert digest(b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_file_digest_never_hashes_what_it_could_not_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    (tmp_path / "d").mkdir()
    os.symlink("f", tmp_path / "l")
    os.mkfifo(tmp_path / "p")
    assert file_digest(tmp_path / "f") == digest(b"x")
    assert file_digest(tmp_path / "none") is None
    assert file_digest(tmp_path / "d") == "<directory>"
    assert file_digest(tmp_path / "l") == "<is a symlink; not followed>"
    assert file_digest(tmp_path / "p") == "<not a regular file (a FIFO); not read>"


def test_each_special_file_is_named() -> None:
    assert [file_kind(m) for m in (stat.S_IFDIR, stat.S_IFIFO, stat.S_IFSOCK, stat.S_IFCHR, stat.S_IFBLK,
                                   stat.S_IFLNK, stat.S_IFREG)] == [
        "directory", "FIFO", "socket", "character device", "block device", "symlink", "special file"]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    rcs = tmp_path / ".rcs"
    rcs.mkdir()
    (rcs / "ok.json").write_bytes(b'{"a": 1}')
    (tmp_path / "outside.json").write_bytes(b'{"out": 1}')
    os.symlink(rcs / "ok.json", rcs / "in-link.json")
    os.symlink(tmp_path / "outside.json", rcs / "out-link.json")
    os.mkfifo(rcs / "fifo.json")
    (rcs / "dir.json").mkdir()
    return tmp_path


def test_read_bounded_reads_regular_files_and_links_inside(files: Path) -> None:
    rcs = files / ".rcs"
    got = read_bounded(rcs / "ok.json", within=rcs)
    assert (got.exists, got.raw, got.error, got.truncated) == (True, b'{"a": 1}', None, False)
    assert got.stat is not None and got.stat.st_size == 8
    assert read_bounded(rcs / "in-link.json", within=rcs).raw == b'{"a": 1}'
    assert read_bounded(rcs / "out-link.json").raw == b'{"out": 1}'


def test_read_bounded_refuses_with_the_reason(files: Path) -> None:
    rcs = files / ".rcs"
    out = read_bounded(rcs / "out-link.json", within=rcs)
    assert (out.exists, out.raw, out.error, out.kind) == (True, None, "symlink leads outside .rcs/; not followed",
                                                          "symlink")
    nofollow = read_bounded(rcs / "in-link.json", follow_links=False)
    assert (nofollow.error, nofollow.kind) == ("is a symlink; not followed", "symlink")
    fifo = read_bounded(rcs / "fifo.json")
    assert (fifo.raw, fifo.error, fifo.kind) == (None, "not a regular file (a FIFO); not read", "FIFO")
    assert read_bounded(rcs / "dir.json").error == "not a regular file (a directory); not read"
    big = read_bounded(rcs / "ok.json", max_bytes=7)
    assert (big.raw, big.error) == (None, "too large (8 bytes > 7)")
    gone = read_bounded(rcs / "none.json")
    assert (gone.exists, gone.raw, gone.error) == (False, None, None)
    dangling = rcs / "dangling.json"
    os.symlink(rcs / "nowhere", dangling)
    assert read_bounded(dangling).exists is False


def test_a_socket_is_refused_by_name(tmp_path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    try:
        got = read_bounded(tmp_path / "s")
    finally:
        sock.close()
    assert (got.error, got.kind) == ("not a regular file (a socket); not read", "socket")


def test_a_directory_link_leading_out_is_refused_on_the_open_file(tmp_path: Path) -> None:
    rcs = tmp_path / ".rcs"
    rcs.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.json").write_bytes(b"{}")
    os.symlink(tmp_path / "out", rcs / "state")
    got = read_bounded(rcs / "state" / "a.json", within=rcs)
    assert (got.raw, got.error) == (None, "symlink leads outside .rcs/; not followed")
    assert read_bounded(rcs / "state" / "a.json").raw == b"{}"


def test_an_unstattable_path_says_so(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    got = read_bounded(tmp_path / "f" / "below")
    assert (got.exists, got.raw, got.error) == (True, None, "cannot stat: Not a directory")


def test_head_and_tail_read_at_most_the_cap_and_say_they_cut(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    head = read_bounded(path, max_bytes=4, part="head")
    tail = read_bounded(path, max_bytes=4, part="tail")
    whole_tail = read_bounded(path, max_bytes=10, part="tail")
    whole_head = read_bounded(path, max_bytes=10, part="head")
    assert (head.raw, head.truncated) == (b"0123", True)
    assert (tail.raw, tail.truncated) == (b"6789", True)
    assert (whole_tail.raw, whole_tail.truncated) == (b"0123456789", False)
    assert (whole_head.raw, whole_head.truncated) == (b"0123456789", False)


def test_a_file_larger_than_one_read_is_read_whole(tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 17)
    (tmp_path / "f").write_bytes(data)
    assert read_bounded(tmp_path / "f").raw == data


def test_a_file_that_grew_past_the_cap_while_read_is_refused_or_cut(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    real = os.fstat

    def small(fd: int) -> os.stat_result:  # the fstat saw the file before it grew to 8 bytes
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], 3, *st[7:]))

    path.write_bytes(b"abcdefgh")
    monkeypatch.setattr(io.os, "fstat", small)
    whole = read_bounded(path, max_bytes=5)
    head = read_bounded(path, max_bytes=5, part="head")
    monkeypatch.undo()
    assert (whole.raw, whole.error) == (None, "too large (> 5 bytes)")
    assert head.raw == b"abcde"


def test_the_strict_parser_refuses_what_the_runtime_cannot_read() -> None:
    with pytest.raises(ValueError, match="^non-finite number NaN is not JSON$"):
        loads_strict("[NaN]")
    with pytest.raises(ValueError, match="^non-finite number -Infinity is not JSON$"):
        loads_strict("[-Infinity]")
    with pytest.raises(ValueError, match="^number 1e999 is too large for a float$"):
        loads_strict("[1e999]")
    assert loads_strict("[1.5e10]") == [1.5e10]
    with pytest.raises(TypeError, match="^the JSON object must be str, bytes or bytearray, not int$"):
        loads_strict(5)  # type: ignore[arg-type]
    assert loads_strict('{"a": "\\u00e9"}'.encode("utf-16")) == {"a": "é"}
    assert loads_strict(bytearray(b"[1]")) == [1]


def test_nesting_deeper_than_the_cap_is_refused() -> None:
    assert loads_strict("[" * 100 + "]" * 100) is not None
    with pytest.raises(NestedTooDeep, match="^nested deeper than 100 levels$"):
        loads_strict("[" * 101 + "]" * 101)
    with pytest.raises(NestedTooDeep):
        loads_strict('{"a":' * 101 + "1" + "}" * 101)
    with pytest.raises(NestedTooDeep):
        loads_strict("[" * 100000 + "]" * 100000)
    wide = "[" + ",".join(["[[1]]"] * 60) + "]"  # many brackets, shallow: allowed
    assert len(loads_strict(wide)) == 60
    assert loads_strict('["[[[' + "[" * 200 + '"]') == ["[[[" + "[" * 200]


def test_a_lone_surrogate_is_found_in_keys_values_and_lists() -> None:
    assert lone_surrogate({"a": ["x", {"b": "ok\ud801"}]}) == 0xD801
    assert lone_surrogate({"\udc00": 1}) == 0xDC00
    assert lone_surrogate({"a": ["é", 1, None, {"b": "ok"}]}) is None


BAD = [
    (b"{\x00}", "binary content (NUL bytes), not JSON"),
    (b'{"a": "\xff"}', "not UTF-8 (byte 7)"),
    (b"", "empty file (truncated mid-write?)"),
    (b'{"a": 1', "invalid JSON at line 1 column 8: Expecting ',' delimiter (truncated mid-write?)"),
    (b'{"a": 1} x}', "invalid JSON at line 1 column 10: Extra data"),
    (b'{"a": 1}}', "invalid JSON at line 1 column 9: Extra data (truncated mid-write?)"),
    (b'{"a": tru}\n', "invalid JSON at line 1 column 7: Expecting value"),
    (b'{"a": "b', "invalid JSON at line 1 column 7: Unterminated string starting at (truncated mid-write?)"),
    (b'{"a": [1, 2', "invalid JSON at line 1 column 12: Expecting ',' delimiter (truncated mid-write?)"),
    (b'{"a": NaN}', "invalid JSON: non-finite number NaN is not JSON"),
    (b"[" * 101 + b"]" * 101, "JSON nested deeper than 100 levels"),
    (b'{"a": "\\ud800"}',
     "holds text that is not valid Unicode (a lone surrogate escape \\ud800); not usable as state"),
    (b"[1]", "expected a JSON object, got list"),
]


@pytest.mark.parametrize(("raw", "error"), BAD)
def test_each_bad_file_reads_with_its_reason(tmp_path: Path, raw: bytes, error: str) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    got = read_json(path)
    assert (got.exists, got.raw, got.error) == (True, raw, error)
    assert got.ok is False and got.refused is False and got.sha == digest(raw)
    assert parse_fast(path, raw, None) == got


def test_the_expected_type_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": 1}')
    assert read_json(path, expect=list).error == "expected a JSON list, got dict"
    assert read_json(path, expect=None).data == {"a": 1}
    assert parse_fast(path, b"[1]", None, expect=None).data == [1]
    assert parse_fast(path, b'"\\ud800 x"', None, expect=str).error.startswith("holds text that is not valid")


def test_a_good_file_reads_with_its_data_and_stat(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": [1, 2.5, "\\u00e9"]}')
    got = read_json(path)
    assert (got.ok, got.refused, got.error, got.data) == (True, False, None, {"a": [1, 2.5, "é"]})
    assert got.stat is not None and got.stat.st_size == path.stat().st_size
    fast = parse_fast(path, path.read_bytes(), got.stat)
    assert fast == got and fast.stat is got.stat


def test_a_refused_or_missing_file_parses_to_no_data(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    got = read_json(tmp_path / "p")
    assert (got.exists, got.raw, got.data, got.error, got.refused, got.ok) == (
        True, None, None, "not a regular file (a FIFO); not read", True, False)
    assert got.sha is None and got.stat is not None
    gone = read_json(tmp_path / "none")
    assert (gone.exists, gone.ok, gone.refused) == (False, False, False)
    assert parse_json(BytesRead(tmp_path / "x", True, error="why")) == read_json(tmp_path / "p").__class__(
        tmp_path / "x", True, error="why")


def test_state_is_written_as_the_runtime_writes_it() -> None:
    assert dump_json({"b": "é", "a": [1]}) == '{\n  "b": "é",\n  "a": [\n    1\n  ]\n}\n'.encode()
    with pytest.raises(ValueError):
        dump_json({"a": float("nan")})
    with pytest.raises(ValueError) as caught:
        dump_json({"a": "x\udc80"})
    assert str(caught.value) == ("holds text that is not valid Unicode (a lone surrogate, U+DC80, e.g. from a "
                                 "non-UTF-8 byte); nothing was written")


def test_an_atomic_write_keeps_the_file_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "d" / "a.json"
    atomic_write(path, b"one")
    assert path.read_bytes() == b"one" and stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o600)
    atomic_write(path, b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path / "d") == ["a.json"]


def test_a_failed_atomic_write_leaves_the_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io.os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["a.json"]


def test_append_line_starts_a_new_line_when_the_file_lacks_one(tmp_path: Path) -> None:
    path = tmp_path / "d" / "log"
    append_line(path, "one\n")
    append_line(path, "two")
    with open(path, "ab") as fh:
        fh.write(b"torn")
    append_line(path, "three")
    assert path.read_bytes() == b"one\ntwo\ntorn\nthree\n"
    assert json.loads(json.dumps(path.read_text()))  # text, UTF-8


def test_fsync_dir_is_best_effort(tmp_path: Path) -> None:
    fsync_dir(tmp_path / "none")
    fsync_dir(tmp_path)


def test_a_huge_number_is_named_by_its_first_forty_characters() -> None:
    text = "1" * 45 + "e999"
    with pytest.raises(ValueError) as caught:
        loads_strict(f"[{text}]")
    assert str(caught.value) == f"number {text[:40]} is too large for a float"


def test_nesting_of_exactly_the_cap_is_allowed_among_many_brackets() -> None:
    doc = "[" * 99 + "[],[]" + "]" * 99  # 100 levels, 101 brackets: the depth walk runs
    assert loads_strict(doc) is not None
    with pytest.raises(NestedTooDeep):
        loads_strict("[" * 100 + "[],[]" + "]" * 100)
    assert loads_strict("[" + "[[1]]," * 60 + "1]") is not None


def test_atomic_writes_make_missing_directories_and_stage_beside_the_file(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d" / "e" / "a.json"
    staged: list[str] = []
    real = os.replace

    def replace(src: str, dst: object) -> None:
        staged.append(src)
        real(src, dst)

    monkeypatch.setattr(io.os, "replace", replace)
    atomic_write(path, b"one")
    monkeypatch.undo()
    assert path.read_bytes() == b"one"
    [src] = staged
    assert Path(src).parent == path.parent and Path(src).name.startswith(".a.json.") and src.endswith(".tmp")
    append_line(tmp_path / "f" / "g" / "log", "x")
    assert (tmp_path / "f" / "g" / "log").read_bytes() == b"x\n"


def test_append_line_keeps_the_line_as_given_and_creates_files_0644(tmp_path: Path) -> None:
    path = tmp_path / "log"
    old = os.umask(0o022)
    try:
        append_line(path, "spaces  \n")
        append_line(path, "endsX")
    finally:
        os.umask(old)
    assert path.read_bytes() == b"spaces  \nendsX\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_every_answer_names_the_path_asked_and_keeps_the_stat_it_took(files: Path) -> None:
    from rcs_tui.files import inputs

    rcs = files / ".rcs"
    (files / "f").write_bytes(b"x")
    cases = {"missing": (rcs / "none.json", {}), "unstattable": (files / "f" / "below", {}),
             "no-follow": (rcs / "in-link.json", {"follow_links": False}),
             "outside": (rcs / "out-link.json", {"within": rcs}), "fifo": (rcs / "fifo.json", {}),
             "dir": (rcs / "dir.json", {}), "regular": (rcs / "ok.json", {}),
             "dangling": (rcs / "dangling", {})}
    os.symlink(rcs / "nowhere", rcs / "dangling")
    recorder = inputs.Recorder((str(files),), str(files))
    with inputs.recording(recorder):
        got = {name: read_bounded(path, **kw) for name, (path, kw) in cases.items()}
    for name, (path, _kw) in cases.items():
        assert got[name].path == path, name
        assert str(path) in recorder.inputs, name
    assert [name for name, g in got.items() if g.stat is not None] == ["no-follow", "outside", "fifo", "dir",
                                                                      "regular"]


@pytest.mark.parametrize(("swapped_in", "error", "kind"), [
    ("symlink", "became a symlink while being read; not followed", "symlink"),
    ("fifo", "not a regular file (a FIFO); not read", "FIFO"),
    ("socket", "not a regular file (a socket); not read", "socket"),
])
def test_a_file_swapped_for_something_else_after_its_check_is_refused(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      swapped_in: str, error: str,
                                                                      kind: str) -> None:
    regular = tmp_path / "regular"
    regular.write_bytes(b"{}")
    path = tmp_path / "a.json"
    sock = None
    if swapped_in == "symlink":
        os.symlink(regular, path)
    elif swapped_in == "fifo":
        os.mkfifo(path)
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    real = os.lstat
    monkeypatch.setattr(io.os, "lstat", lambda p: real(regular) if os.fspath(p) == str(path) else real(p))
    try:
        got = read_bounded(path)
    finally:
        monkeypatch.undo()
        if sock is not None:
            sock.close()
    assert (got.exists, got.raw, got.error, got.kind) == (True, None, error, kind)
    assert got.path == path


def _grown(monkeypatch: pytest.MonkeyPatch, seen_size: int) -> None:
    """Every fstat sees the file at `seen_size` bytes: it grew between the fstat and the read."""
    real = os.fstat

    def stale(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], seen_size, *st[7:]))

    monkeypatch.setattr(io.os, "fstat", stale)


def test_a_file_grown_to_exactly_one_byte_past_the_cap_is_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    _grown(monkeypatch, 4)  # the first read asks for 5 = the cap: one more read finds the sixth byte
    got = read_bounded(path, max_bytes=5)
    monkeypatch.undo()
    assert (got.path, got.exists, got.raw, got.error) == (path, True, None, "too large (> 5 bytes)")
    assert got.stat is not None and got.stat.st_ino == path.stat().st_ino


def test_a_growing_file_is_read_no_further_than_one_byte_past_the_cap(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(os.urandom(3 << 20))
    asked: list[int] = []
    real = os.read

    def read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)

    _grown(monkeypatch, 3)
    monkeypatch.setattr(io.os, "read", read)
    head = read_bounded(path, max_bytes=(2 << 20) + 5, part="head")
    monkeypatch.undo()
    # one byte more than the size fstat saw, then 1 MiB at a time, never past the cap + 1 in all
    assert asked == [4, 1 << 20, 1 << 20, 2]
    assert head.raw == path.read_bytes()[: (2 << 20) + 5] and head.truncated is True


def test_a_tail_that_leaves_one_byte_unread_says_it_cut(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"01234")
    tail = read_bounded(path, max_bytes=4, part="tail")
    assert (tail.raw, tail.truncated) == (b"1234", True)


def test_a_refusal_keeps_the_path_and_the_stat_it_took(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345678")
    big = read_bounded(path, max_bytes=7)
    assert (big.path, big.exists, big.raw, big.error, big.truncated) == (path, True, None, "too large (8 bytes > 7)",
                                                                       False)
    assert big.stat is not None and big.stat.st_ino == path.stat().st_ino
    gone = read_bounded(tmp_path / "none")
    assert (gone.path, gone.truncated, gone.stat, gone.kind) == (tmp_path / "none", False, None, None)


@pytest.mark.parametrize("where", ["open", "fstat"])
def test_a_file_that_cannot_be_opened_or_looked_at_is_unreadable_with_the_reason(
        files: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    rcs = files / ".rcs"
    path = rcs / "ok.json"
    real = getattr(os, where)

    def fail(target: object, *args: object) -> object:
        if where == "open" and os.fspath(target) != str(path):  # type: ignore[call-overload]
            return real(target, *args)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(io.os, where, fail)
    got = read_bounded(path, within=rcs)
    monkeypatch.undo()
    assert (got.path, got.exists, got.raw, got.error, got.stat) == (path, True, None, "unreadable: Input/output error",
                                                                   None)


def test_an_error_without_words_is_shown_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")

    def fail(*args: object) -> object:
        raise OSError("no words")

    monkeypatch.setattr(io.os, "open", fail)
    assert read_bounded(path).error == "unreadable: no words"
    monkeypatch.undo()
    fd = os.open(path, os.O_RDONLY)
    try:
        monkeypatch.setattr(io.os, "read", fail)
        got = io.read_fd(fd, path)
    finally:
        monkeypatch.undo()
        os.close(fd)
    assert (got.path, got.exists, got.raw, got.error) == (path, True, None, "unreadable: no words")
    assert got.stat is not None and got.stat.st_ino == path.stat().st_ino


def test_a_descriptor_that_cannot_be_looked_at_reads_as_unreadable_without_a_stat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    fd = os.open(path, os.O_RDONLY)

    def fail(fd: int) -> os.stat_result:
        raise OSError(errno.EIO, "Input/output error")

    try:
        monkeypatch.setattr(io.os, "fstat", fail)
        got = io.read_fd(fd, path)
    finally:
        monkeypatch.undo()
        os.close(fd)
    assert (got.path, got.exists, got.raw, got.error, got.stat) == (path, True, None, "unreadable: Input/output error",
                                                                   None)


def test_a_file_moved_out_after_it_was_opened_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rcs = tmp_path / ".rcs"
    rcs.mkdir()
    (tmp_path / "out").mkdir()
    path = rcs / "a.json"
    path.write_bytes(b"{}")
    real = os.fstat

    def moved(fd: int) -> os.stat_result:  # between the open and the check, the open file moves outside
        if path.exists():
            os.rename(path, tmp_path / "out" / "a.json")
        return real(fd)

    monkeypatch.setattr(io.os, "fstat", moved)
    got = read_bounded(path, within=rcs)
    monkeypatch.undo()
    assert (got.path, got.exists, got.raw, got.error) == (path, True, None, "symlink leads outside .rcs/; not followed")
    assert got.stat is not None and got.stat.st_ino == (tmp_path / "out" / "a.json").stat().st_ino


def test_without_proc_the_open_file_is_found_by_its_resolved_path(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rcs = files / ".rcs"

    class NoProc:
        """The os module of a system without /proc/self/fd."""

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def readlink(self, path: str) -> str:
            raise OSError(errno.ENOENT, "No such file or directory")

    monkeypatch.setattr(io, "os", NoProc())
    assert io.opened_path(0, str(rcs / "in-link.json")) == str(rcs / "ok.json")
    assert read_bounded(rcs / "ok.json", within=rcs).raw == b'{"a": 1}'
    assert read_bounded(rcs / "in-link.json", within=rcs).raw == b'{"a": 1}'


def test_the_json_reader_passes_on_its_cap_and_confinement(files: Path) -> None:
    rcs = files / ".rcs"
    assert read_json(rcs / "ok.json", max_bytes=7).error == "too large (8 bytes > 7)"
    assert read_json(rcs / "out-link.json", within=rcs).error == "symlink leads outside .rcs/; not followed"
    assert read_json(rcs / "out-link.json").data == {"out": 1}


@pytest.mark.parametrize(("raw", "error"), BAD + [
    (b'{"a": "b}', "invalid JSON at line 1 column 7: Unterminated string starting at (truncated mid-write?)"),
    (b"[1 2]", "invalid JSON at line 1 column 4: Expecting ',' delimiter"),
    (b"[" + b"1" * 5001 + b"]", "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: value "
                                "has 5001 digits; use sys.set_int_max_str_digits() t"),
], ids=["nul", "not-utf8", "empty", "torn-object", "extra-data", "extra-brace", "bad-value", "torn-string",
        "torn-list", "nan", "too-deep", "lone-surrogate", "list", "torn-string-before-brace", "error-mid-list",
        "huge-integer"])
def test_each_bad_file_keeps_its_path_stat_and_what_parsed(tmp_path: Path, raw: bytes, error: str) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    got = read_json(path, expect=dict if raw != b"[1 2]" else None)
    assert (got.path, got.exists, got.raw, got.error) == (path, True, raw, error)
    assert got.stat is not None and got.stat.st_ino == path.stat().st_ino
    parsed = {b"[1]": [1], b'{"a": "\\ud800"}': {"a": "\ud800"}}
    assert got.data == parsed.get(raw)
    gone = read_json(tmp_path / "none.json")
    assert (gone.path, gone.exists, gone.stat) == (tmp_path / "none.json", False, None)


def test_a_shallow_document_with_many_brackets_parses_as_the_type_asked(tmp_path: Path) -> None:
    raw = ("[" + "[1]," * 120 + "1]").encode()
    got = parse_fast(tmp_path / "a.json", raw, None, expect=list)
    assert (got.error, len(got.data)) == (None, 121)


def test_a_stack_overflowing_document_is_named_too_deep() -> None:
    with pytest.raises(NestedTooDeep) as caught:
        loads_strict("[" * 100000 + "]" * 100000)
    assert str(caught.value) == "nested deeper than 100 levels"


def test_an_encoded_lone_surrogate_parses_so_it_can_be_found_and_refused() -> None:
    data = loads_strict(b'["\xed\xa0\x80"]')
    assert data == ["\ud800"] and lone_surrogate(data) == 0xD800


def test_keys_and_short_values_of_many_files_are_held_once() -> None:
    short, long = "v" * io.SHARED_STRING_MAX, "w" * (io.SHARED_STRING_MAX + 1)
    first = loads_strict(json.dumps({"field-name": short, "other": long}))
    second = loads_strict(json.dumps({"field-name": short, "other": long}).encode())
    (k1, v1), (k2, v2) = next(iter(first.items())), next(iter(second.items()))
    assert k1 is k2 and v1 is v2
    assert first["other"] == second["other"] and first["other"] is not second["other"]

