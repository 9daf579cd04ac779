"""The confined file layer's rules, checked on the files they leave: which paths may be touched, what a
compare-and-swap puts in place or leaves alone, and the words of each refusal."""

from __future__ import annotations

import errno
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from rcs_tui.files import fsafe
from rcs_tui.files.fsafe import Refused, Tree, check_rel
from rcs_tui.files.io import digest

STATE = ".rcs/state"
needs_renameat2 = pytest.mark.skipif(fsafe._renameat2 is None, reason="renameat2 is Linux-only")


@pytest.mark.parametrize(("rel", "why"), [
    ("/etc/passwd", "is an absolute path; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed"),
    (".rcs/state/../../x", "contains '..'; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed"),
    (".rcs/other/x.json", "is outside .rcs/state, .rcs/tasks and .rcs/logs"),
    (".rcs/state", "is outside .rcs/state, .rcs/tasks and .rcs/logs"),
    ("x/.rcs/state/a", "is outside .rcs/state, .rcs/tasks and .rcs/logs"),
    ("", "not a usable path"),
    (".rcs/state/a\x00b", "not a usable path"),
])
def test_paths_outside_the_owned_trees_are_refused_with_the_reason(rel: str, why: str) -> None:
    with pytest.raises(Refused) as caught:
        check_rel(rel)
    assert caught.value.why == why
    assert str(caught.value) == f"{rel}: {why}"
    assert caught.value.errno == errno.EPERM and caught.value.kind is None


def test_a_lone_surrogate_in_a_path_is_refused_and_shown_escaped() -> None:
    with pytest.raises(Refused) as caught:
        check_rel(".rcs/state/\ud800x.json")
    assert str(caught.value) == ".rcs/state/\\ud800x.json: holds characters no file name can have (a lone surrogate)"


@pytest.mark.parametrize(("rel", "parts"), [
    (".rcs/state/forge-state.json", (".rcs", "state", "forge-state.json")),
    ("./.rcs/./tasks/t1/state.json", (".rcs", "tasks", "t1", "state.json")),
    (Path(".rcs/logs/j.jsonl"), (".rcs", "logs", "j.jsonl")),
])
def test_owned_paths_split_into_their_components(rel: str, parts: tuple[str, ...]) -> None:
    assert check_rel(rel) == parts


def _tree(tmp_path: Path) -> Tree:
    (tmp_path / STATE).mkdir(parents=True)
    return Tree(tmp_path)


def _fails(code: int) -> Callable[..., None]:
    """A stand-in for a system call that fails with `code` (and the system's words for it)."""
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))
    return fail


def test_a_symlinked_directory_on_the_way_is_refused_not_followed(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.json").write_text("{}")
    os.symlink(tmp_path / "elsewhere", tmp_path / STATE)
    tree = Tree(tmp_path)
    with pytest.raises(Refused) as caught:
        tree.read(f"{STATE}/a.json")
    assert str(caught.value) == ".rcs/state/a.json: .rcs/state is a symlink or not a directory; not followed"
    with pytest.raises(Refused) as caught:
        tree.append(f"{STATE}/a.json", b"x\n")
    assert str(caught.value) == ".rcs/state/a.json: .rcs/state is a symlink or not a directory; not followed"
    assert (tmp_path / "elsewhere" / "a.json").read_text() == "{}"


def test_a_file_where_a_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    (tmp_path / STATE).write_text("not a dir")
    with pytest.raises(Refused) as caught:
        Tree(tmp_path).append(f"{STATE}/sessions/s1/a.json", b"x\n")
    assert str(caught.value) == (".rcs/state/sessions/s1/a.json: .rcs/state is a symlink or not a directory; "
                                 "not followed")


def test_a_missing_directory_is_created_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    tree = Tree(tmp_path)
    with pytest.raises(FileNotFoundError):
        with tree.parent(f"{STATE}/sessions/s1/a.json"):
            pass
    with tree.parent(f"{STATE}/sessions/s1/a.json", create=True) as (dfd, name):
        assert name == "a.json"
        assert os.fstat(dfd).st_ino == os.stat(tmp_path / STATE / "sessions" / "s1").st_ino
    assert stat.S_IMODE(os.stat(tmp_path / STATE / "sessions").st_mode) == 0o755 & ~_umask()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_read_file_says_why_each_non_file_is_not_read(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    base = tmp_path / STATE
    (base / "ok.json").write_bytes(b"{}")
    os.symlink(base / "ok.json", base / "link.json")
    os.mkfifo(base / "fifo.json")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(base / "sock.json"))
    (base / "big.json").write_bytes(b"x" * 11)
    try:
        got = {n: tree.read_file(f"{STATE}/{n}", max_bytes=10)
               for n in ("ok.json", "link.json", "fifo.json", "sock.json", "big.json", "none.json")}
    finally:
        sock.close()
    assert (got["ok.json"].exists, got["ok.json"].raw, got["ok.json"].error) == (True, b"{}", None)
    assert got["ok.json"].path == base / "ok.json"
    assert (got["link.json"].raw, got["link.json"].error, got["link.json"].kind) == (
        None, "is a symlink; not followed", "symlink")
    assert (got["fifo.json"].error, got["fifo.json"].kind) == ("not a regular file (a FIFO); not read", "FIFO")
    assert (got["sock.json"].error, got["sock.json"].kind) == ("not a regular file (a socket); not read", "socket")
    assert got["big.json"].error == "too large (11 bytes > 10)"
    assert (got["none.json"].exists, got["none.json"].raw, got["none.json"].error) == (False, None, None)


def test_read_answers_bytes_none_or_refused_with_the_reason(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"abc")
    os.symlink("a.json", tmp_path / STATE / "l.json")
    assert tree.read(f"{STATE}/a.json") == b"abc"
    assert tree.read(f"{STATE}/b.json") is None
    with pytest.raises(Refused) as caught:
        tree.read(f"{STATE}/l.json")
    assert (str(caught.value), caught.value.kind) == (".rcs/state/l.json: is a symlink; not followed", "symlink")
    with pytest.raises(Refused) as caught:
        tree.read(f"{STATE}/a.json", max_bytes=2)
    assert str(caught.value) == ".rcs/state/a.json: too large (3 bytes > 2)"


def test_read_json_parses_through_the_confined_reader(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"[1]")
    got = tree.read_json(tmp_path / STATE / "a.json")
    assert got.error == "expected a JSON object, got list"
    as_list = tree.read_json(f"{STATE}/a.json", expect=list)
    assert (as_list.data, as_list.error) == ([1], None)


def test_lstat_sees_the_link_itself_and_none_when_absent(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    os.symlink("nowhere", tmp_path / STATE / "l.json")
    st = tree.lstat(f"{STATE}/l.json")
    assert st is not None and stat.S_ISLNK(st.st_mode)
    assert tree.lstat(f"{STATE}/none.json") is None
    assert tree.lstat(f"{STATE}/sessions/s1/none.json") is None


def test_append_starts_a_new_line_and_returns_where_it_began(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    (tmp_path / ".rcs").mkdir()
    rel = ".rcs/tasks/t1/transcript.jsonl"
    assert tree.append(rel, b"one\n") == (0, b"one\n")
    assert tree.append(rel, b"two\n") == (4, b"two\n")
    with open(tmp_path / rel, "ab") as fh:
        fh.write(b"torn")
    assert tree.append(rel, b"three\n") == (12, b"\nthree\n")
    assert (tmp_path / rel).read_bytes() == b"one\ntwo\ntorn\nthree\n"


def test_append_refuses_a_fifo_and_a_symlink(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    os.mkfifo(tmp_path / STATE / "fifo")
    os.symlink("target", tmp_path / STATE / "link")
    with pytest.raises(Refused) as caught:
        tree.append(f"{STATE}/fifo", b"x\n")
    assert str(caught.value) == ".rcs/state/fifo: is not a regular file; not written"
    with pytest.raises(Refused) as caught:
        tree.append(f"{STATE}/link", b"x\n")
    assert str(caught.value) == ".rcs/state/link: is a symlink; not followed"
    assert not (tmp_path / STATE / "target").exists()


def test_a_failed_append_leaves_no_torn_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "log").write_bytes(b"kept\n")

    def fail(fd: int, data: bytes) -> None:
        os.write(fd, bytes(data)[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsafe, "write_all", fail)
    with pytest.raises(OSError) as caught:
        tree.append(f"{STATE}/log", b"new line\n")
    assert caught.value.errno == errno.ENOSPC
    assert (tmp_path / STATE / "log").read_bytes() == b"kept\n"


def test_writing_through_a_hard_link_is_refused_reading_is_not(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    target = tmp_path / STATE / "a.json"
    target.write_bytes(b"{}")
    os.link(target, tmp_path / "outside.json")
    with pytest.raises(Refused) as caught:
        tree.append(f"{STATE}/a.json", b"x\n")
    assert str(caught.value) == ".rcs/state/a.json: has 1 other hard link, possibly outside .rcs; not written"
    os.link(target, tmp_path / "outside2.json")
    with pytest.raises(Refused) as caught:
        tree.append(f"{STATE}/a.json", b"x\n")
    assert caught.value.why == "has 2 other hard links, possibly outside .rcs; not written"
    assert tree.read(f"{STATE}/a.json") == b"{}"
    assert (tmp_path / "outside.json").read_bytes() == b"{}"


def test_read_at_reads_a_file_in_a_held_directory(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"12345")
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        assert fsafe.read_at(dfd, name, f"{STATE}/a.json") == b"12345"
        with pytest.raises(Refused) as caught:
            fsafe.read_at(dfd, name, f"{STATE}/a.json", max_bytes=4)
    assert str(caught.value) == ".rcs/state/a.json: too large (5 bytes > 4)"


def test_write_all_goes_on_after_a_short_write_and_stops_when_none_is_made(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    real = os.write
    monkeypatch.setattr(fsafe.os, "write", lambda f, data: real(f, bytes(data)[:2]))
    try:
        fsafe.write_all(fd, b"abcdefg")
        monkeypatch.setattr(fsafe.os, "write", lambda f, data: 0)
        with pytest.raises(OSError) as caught:
            fsafe.write_all(fd, b"xyz")
    finally:
        monkeypatch.undo()
        os.close(fd)
    assert path.read_bytes() == b"abcdefg"
    assert (caught.value.errno, caught.value.strerror) == (errno.EIO, "write made no progress")


def test_stage_writes_a_temp_beside_the_file_with_the_given_mode(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"data", 0o640)
    assert tmp.startswith(".a.json.") and tmp.endswith(".rcs-tui.tmp") and len(tmp) == len(".a.json.") + 10 + 12
    path = tmp_path / STATE / tmp
    assert path.read_bytes() == b"data"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_failed_stage_leaves_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)

    def fail(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsafe, "write_all", fail)
    with tree.parent(f"{STATE}/a.json") as (dfd, name), pytest.raises(OSError):
        fsafe.stage(dfd, name, b"data")
    assert os.listdir(tmp_path / STATE) == []


def test_a_rewrite_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"{}")
    os.chmod(tmp_path / STATE / "a.json", 0o600)
    os.symlink("a.json", tmp_path / STATE / "l.json")
    os.chmod(tmp_path / STATE / "a.json", 0o600)
    with tree.parent(f"{STATE}/a.json") as (dfd, _name):
        assert fsafe.mode_of(dfd, "a.json") == 0o600
        assert fsafe.mode_of(dfd, "l.json") == 0o644
        assert fsafe.mode_of(dfd, "new.json") == 0o644


def _staged(tree: Tree, rel: str, data: bytes) -> tuple[int, str, str]:
    ctx = tree.parent(rel)
    dfd, name = ctx.__enter__()
    return dfd, name, fsafe.stage(dfd, name, data)


@pytest.fixture(params=["exchange", "plain"])
def swap_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways a file is swapped in: renameat2's exchange (Linux) and read-compare-rename elsewhere."""
    if request.param == "plain":
        monkeypatch.setattr(fsafe, "_renameat2", None)
        monkeypatch.setattr(fsafe, "_exchange_works", False)
    elif fsafe._renameat2 is None:
        pytest.skip("renameat2 is Linux-only")
    return str(request.param)


def _temps(tmp_path: Path) -> list[str]:
    return [n for n in os.listdir(tmp_path / STATE) if n.endswith(fsafe.TEMP_SUFFIX)]


def test_swap_in_replaces_only_the_expected_bytes(tmp_path: Path, swap_kind: str) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"old")
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(True, digest(b"old"))
        assert path.read_bytes() == b"new" and _temps(tmp_path) == []
        tmp = fsafe.stage(dfd, name, b"newer")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(False, digest(b"new"))
        assert path.read_bytes() == b"new" and _temps(tmp_path) == []


def test_swap_in_of_an_expected_absent_file_never_overwrites_one(tmp_path: Path, swap_kind: str) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"first")
        assert fsafe.swap_in(dfd, name, tmp, None, "a") == fsafe.SwapResult(True, None)
        assert path.read_bytes() == b"first"
        tmp = fsafe.stage(dfd, name, b"second")
        assert fsafe.swap_in(dfd, name, tmp, None, "a") == fsafe.SwapResult(False, digest(b"first"))
    assert path.read_bytes() == b"first" and _temps(tmp_path) == []


def test_swap_in_over_a_file_removed_meanwhile_is_refused(tmp_path: Path, swap_kind: str) -> None:
    tree = _tree(tmp_path)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(False, None)
    assert not (tmp_path / STATE / "a.json").exists() and _temps(tmp_path) == []


@needs_renameat2
def test_swap_in_over_a_directory_puts_the_directory_back(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").mkdir()
    (tmp_path / STATE / "a.json" / "inner").write_text("x")
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(False, "<not a regular file>")
    assert (tmp_path / STATE / "a.json" / "inner").read_text() == "x" and _temps(tmp_path) == []


def test_remove_if_deletes_only_the_expected_bytes(tmp_path: Path, swap_kind: str) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"runtime")
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        assert fsafe.remove_if(dfd, name, digest(b"ours"), "a") == fsafe.SwapResult(False, digest(b"runtime"))
        assert path.read_bytes() == b"runtime" and _temps(tmp_path) == []
        assert fsafe.remove_if(dfd, name, digest(b"runtime"), "a") == fsafe.SwapResult(True, digest(b"runtime"))
        assert not path.exists() and os.listdir(tmp_path / STATE) == []
        assert fsafe.remove_if(dfd, name, digest(b"runtime"), "a") == fsafe.SwapResult(False, None)


def test_remove_if_puts_a_directory_back(tmp_path: Path, swap_kind: str) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").mkdir()
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        assert fsafe.remove_if(dfd, name, digest(b"x"), "a") == fsafe.SwapResult(False, "<not a regular file>")
    assert (tmp_path / STATE / "a.json").is_dir() and os.listdir(tmp_path / STATE) == ["a.json"]


@needs_renameat2
def test_a_file_set_aside_is_not_put_back_over_a_new_one(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "aside").write_bytes(b"old")
    (tmp_path / STATE / "a.json").write_bytes(b"runtime's new file")
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        fsafe._put_back(dfd, "aside", name)
    assert (tmp_path / STATE / "a.json").read_bytes() == b"runtime's new file"
    assert os.listdir(tmp_path / STATE) == ["a.json"]
    (tmp_path / STATE / "aside").write_bytes(b"old")
    (tmp_path / STATE / "a.json").unlink()
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        fsafe._put_back(dfd, "aside", name)
    assert os.listdir(tmp_path / STATE) == ["a.json"] and (tmp_path / STATE / "a.json").read_bytes() == b"old"


def test_rename_within_says_whether_the_source_was_there(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a").write_bytes(b"x")
    with tree.parent(f"{STATE}/a") as (dfd, _name):
        assert fsafe.rename_within(dfd, "a", "b") is True
        assert fsafe.rename_within(dfd, "a", "c") is False
    assert os.listdir(tmp_path / STATE) == ["b"]


def test_leftover_temps_are_found_in_every_owned_tree_links_never_followed(tmp_path: Path) -> None:
    for d in (".rcs/state/sessions/s1", ".rcs/tasks/t1", ".rcs/logs", ".rcs/plans", "outside"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    for rel in (".rcs/state/.a.json.0123456789.rcs-tui.tmp", ".rcs/state/sessions/s1/.b.rcs-tui.tmp",
                ".rcs/tasks/t1/.c.rcs-tui.tmp", ".rcs/logs/.d.rcs-tui.tmp", ".rcs/plans/.e.rcs-tui.tmp",
                "outside/.f.rcs-tui.tmp", ".rcs/state/a.json", ".rcs/state/x.tmp"):
        (tmp_path / rel).write_text("")
    os.symlink(tmp_path / "outside", tmp_path / ".rcs/tasks/t2")
    os.symlink(tmp_path / "outside/.f.rcs-tui.tmp", tmp_path / ".rcs/logs/.g.rcs-tui.tmp")
    (tmp_path / ".rcs/state/.dir.rcs-tui.tmp").mkdir()
    assert fsafe.leftover_temps(tmp_path) == [".rcs/logs/.d.rcs-tui.tmp", ".rcs/state/.a.json.0123456789.rcs-tui.tmp",
                                              ".rcs/state/sessions/s1/.b.rcs-tui.tmp", ".rcs/tasks/t1/.c.rcs-tui.tmp"]


def test_leftover_temps_in_the_logs_are_found_when_there_is_no_tasks_tree(tmp_path: Path) -> None:
    (tmp_path / ".rcs/state").mkdir(parents=True)
    (tmp_path / ".rcs/logs").mkdir(parents=True)
    (tmp_path / ".rcs/logs/.j.rcs-tui.tmp").write_text("")
    assert fsafe.leftover_temps(tmp_path) == [".rcs/logs/.j.rcs-tui.tmp"]


def test_leftover_temps_deep_below_a_tree_are_found_and_no_descriptor_is_left_open(tmp_path: Path) -> None:
    deep = tmp_path / ".rcs/state/sessions/s1/a/b/c"
    deep.mkdir(parents=True)
    (deep / ".h.rcs-tui.tmp").write_text("")
    (tmp_path / ".rcs/state/sessions/s2").mkdir()
    os.symlink(deep, tmp_path / ".rcs/state/sessions/s2/link")  # the same directory through a link: not again
    before = len(os.listdir("/proc/self/fd"))
    assert fsafe.leftover_temps(tmp_path) == [".rcs/state/sessions/s1/a/b/c/.h.rcs-tui.tmp"]
    assert len(os.listdir("/proc/self/fd")) == before


def test_remove_temp_removes_only_rcs_tui_temp_files(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / STATE / ".a.rcs-tui.tmp").write_text("")
    (tmp_path / STATE / "a.json").write_text("{}")
    fsafe.remove_temp(tmp_path, f"{STATE}/.a.rcs-tui.tmp")
    fsafe.remove_temp(tmp_path, f"{STATE}/.gone.rcs-tui.tmp")
    with pytest.raises(Refused) as caught:
        fsafe.remove_temp(tmp_path, f"{STATE}/a.json")
    assert str(caught.value) == ".rcs/state/a.json: is not an rcs-tui temp file"
    assert os.listdir(tmp_path / STATE) == ["a.json"]


@needs_renameat2
def test_renameat2_reports_the_failure_with_the_destination(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a").write_bytes(b"a")
    (tmp_path / STATE / "b").write_bytes(b"b")
    with tree.parent(f"{STATE}/a") as (dfd, _name):
        with pytest.raises(FileExistsError) as caught:
            fsafe.renameat2(dfd, "a", "b", fsafe._RENAME_NOREPLACE)
        assert caught.value.filename == "b"
        fsafe.renameat2(dfd, "a", "b", fsafe._RENAME_EXCHANGE)
    assert (tmp_path / STATE / "a").read_bytes() == b"b" and (tmp_path / STATE / "b").read_bytes() == b"a"


def test_a_refusal_is_an_operation_not_permitted_naming_the_path() -> None:
    exc = Refused(".rcs/state/a.json", "is a symlink; not followed")
    assert (exc.errno, exc.strerror, exc.filename) == (errno.EPERM, "is a symlink; not followed", ".rcs/state/a.json")


def test_same_inode_looks_at_the_name_itself_not_a_link_s_target(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a").write_bytes(b"x")
    os.symlink("a", tmp_path / STATE / "l")
    ino = os.stat(tmp_path / STATE / "a").st_ino
    with tree.parent(f"{STATE}/a") as (dfd, _name):
        assert fsafe._same_inode(dfd, "a", ino) is True
        assert fsafe._same_inode(dfd, "l", ino) is False
        assert fsafe._same_inode(dfd, "gone", ino) is False


def test_a_plain_swap_that_cannot_look_or_rename_leaves_no_temp(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "d").mkdir()
    with tree.parent(f"{STATE}/d") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        with pytest.raises(Refused):
            fsafe._swap_plain(dfd, name, tmp, digest(b"old"), f"{STATE}/d")
        assert _temps(tmp_path) == []
        (tmp_path / STATE / "a").write_bytes(b"old")
        tmp = fsafe.stage(dfd, "a", b"new")

        def no_rename(*args: object, **kwargs: object) -> None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")

        monkeypatch.setattr(fsafe.os, "rename", no_rename)
        with pytest.raises(OSError):
            fsafe._swap_plain(dfd, "a", tmp, digest(b"old"), f"{STATE}/a")
        monkeypatch.undo()
    assert _temps(tmp_path) == [] and (tmp_path / STATE / "a").read_bytes() == b"old"


def test_discarding_a_temp_never_fails(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / ".d.rcs-tui.tmp").mkdir()
    with tree.parent(f"{STATE}/a") as (dfd, _name):
        fsafe.discard_temp(dfd, ".gone.rcs-tui.tmp")
        fsafe.discard_temp(dfd, ".d.rcs-tui.tmp")  # a directory: left for the doctor
    assert os.listdir(tmp_path / STATE) == [".d.rcs-tui.tmp"]


def test_renameat2_is_found_in_the_c_library_or_through_the_system_call(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes
    import platform

    if platform.system() != "Linux":
        pytest.skip("renameat2 is Linux-only")
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a").write_bytes(b"a")
    (tmp_path / STATE / "b").write_bytes(b"b")

    def exchanged(func: object) -> bool:
        before = (tmp_path / STATE / "b").read_bytes()
        with tree.parent(f"{STATE}/a") as (dfd, _name):
            rc = func(dfd, b"a", dfd, b"b", fsafe._RENAME_EXCHANGE)  # type: ignore[operator]
        return rc == 0 and (tmp_path / STATE / "a").read_bytes() == before

    assert exchanged(fsafe._load_renameat2())
    real = ctypes.CDLL

    class NoWrapper:
        """A C library without the renameat2 wrapper (older glibc): only `syscall`."""

        def __init__(self, name: object, use_errno: bool = False) -> None:
            self.syscall = real(name, use_errno=use_errno).syscall

    monkeypatch.setattr(ctypes, "CDLL", NoWrapper)
    if platform.machine() in fsafe._SYS_RENAMEAT2:
        assert exchanged(fsafe._load_renameat2())  # swaps a and b back
        assert (tmp_path / STATE / "a").read_bytes() == b"a"
    monkeypatch.setattr(platform, "machine", lambda: "vax")
    assert fsafe._load_renameat2() is None
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    assert fsafe._load_renameat2() is None


@needs_renameat2
def test_remove_if_falls_back_to_a_plain_rename_where_renameat2_is_refused(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"ours")

    unsupported = _fails(errno.EINVAL)

    monkeypatch.setattr(fsafe, "renameat2", unsupported)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        assert fsafe.remove_if(dfd, name, digest(b"ours"), "a") == fsafe.SwapResult(True, digest(b"ours"))
    assert os.listdir(tmp_path / STATE) == []

    broken = _fails(errno.EIO)

    path.write_bytes(b"ours")
    monkeypatch.setattr(fsafe, "renameat2", broken)
    with tree.parent(f"{STATE}/a.json") as (dfd, name), pytest.raises(OSError) as caught:
        fsafe.remove_if(dfd, name, digest(b"ours"), "a")
    assert caught.value.errno == errno.EIO and path.read_bytes() == b"ours"


def test_a_file_set_aside_that_cannot_be_looked_at_is_put_back(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"runtime")

    unreadable = _fails(errno.EIO)

    monkeypatch.setattr(fsafe, "_digest_at", unreadable)
    with tree.parent(f"{STATE}/a.json") as (dfd, name), pytest.raises(OSError):
        fsafe.remove_if(dfd, name, digest(b"runtime"), "a")
    assert os.listdir(tmp_path / STATE) == ["a.json"] and path.read_bytes() == b"runtime"


def test_leftover_temps_are_not_looked_for_through_a_linked_rcs_directory(tmp_path: Path) -> None:
    (tmp_path / "elsewhere" / "state").mkdir(parents=True)
    (tmp_path / "elsewhere" / "state" / ".a.rcs-tui.tmp").write_text("")
    os.symlink(tmp_path / "elsewhere", tmp_path / ".rcs")
    assert fsafe.leftover_temps(tmp_path) == []


@needs_renameat2
def test_renameat2_keeps_the_system_s_error_number(tmp_path: Path) -> None:
    import ctypes

    tree = _tree(tmp_path)
    (tmp_path / STATE / "a").write_bytes(b"a")
    (tmp_path / STATE / "b").write_bytes(b"b")
    func = fsafe._load_renameat2()
    assert func is not None
    if hasattr(ctypes.CDLL(None), "renameat2"):  # the C library's own wrapper is used where it has one
        assert getattr(func, "__name__", "") == "renameat2"
    with tree.parent(f"{STATE}/a") as (dfd, _name):
        ctypes.set_errno(0)
        assert func(dfd, b"a", dfd, b"b", fsafe._RENAME_NOREPLACE) == -1
        assert ctypes.get_errno() == errno.EEXIST
        with pytest.raises(FileExistsError) as caught:
            fsafe.renameat2(dfd, "a", "b", fsafe._RENAME_NOREPLACE)
    assert (caught.value.strerror, caught.value.filename) == (os.strerror(errno.EEXIST), "b")
    assert (tmp_path / STATE / "b").read_bytes() == b"b"


def test_renameat2_where_there_is_none_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsafe, "_renameat2", None)
    with pytest.raises(OSError) as caught:
        fsafe.renameat2(3, "a", "b", fsafe._RENAME_EXCHANGE)
    assert (caught.value.errno, caught.value.strerror) == (errno.ENOSYS, "renameat2 is not available")


def test_a_directory_fsync_that_fails_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    fd = os.open(tmp_path, os.O_RDONLY)
    monkeypatch.setattr(fsafe.os, "fsync", fail)
    try:
        fsafe.fsync_fd(fd)  # best effort: a directory whose fsync fails loses durability, not the change
    finally:
        monkeypatch.undo()
        os.close(fd)


def test_leftover_temps_are_still_found_after_a_directory_that_cannot_be_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for s in ("s1", "s2"):
        (tmp_path / STATE / "sessions" / s).mkdir(parents=True)
        (tmp_path / STATE / "sessions" / s / f".{s}.rcs-tui.tmp").write_text("")
    real = os.open
    failed: list[str] = []

    def open_(path, flags, mode=0o777, *, dir_fd=None):  # the first session directory was swapped for a link
        if path in ("s1", "s2") and not failed:
            failed.append(path)
            raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(fsafe.os, "open", open_)
    found = fsafe.leftover_temps(tmp_path)
    [other] = {"s1", "s2"} - set(failed)
    assert found == [f".rcs/state/sessions/{other}/.{other}.rcs-tui.tmp"]


def _sessions_with_temps(root: Path, count: int = 6) -> list[str]:
    found = []
    for i in range(count):
        d = root / STATE / "sessions" / f"s{i}"
        (d / "sub").mkdir(parents=True)
        (d / f".t{i}.rcs-tui.tmp").write_text("")
        found.append(f".rcs/state/sessions/s{i}/.t{i}.rcs-tui.tmp")
    (root / ".rcs/tasks/t1").mkdir(parents=True)
    (root / ".rcs/tasks/t1/.x.rcs-tui.tmp").write_text("")
    return sorted([*found, ".rcs/tasks/t1/.x.rcs-tui.tmp"])


def _fails_to_list(monkeypatch: pytest.MonkeyPatch, ending: str, error: BaseException) -> list[str]:
    """`os.scandir` of a directory whose path ends with `ending` raises `error` (the first time)."""
    real = os.scandir
    failed: list[str] = []

    def scandir(fd):  # type: ignore[no-untyped-def]
        if isinstance(fd, int) and not failed and os.readlink(f"/proc/self/fd/{fd}").endswith(ending):
            failed.append(ending)
            raise error
        return real(fd)

    monkeypatch.setattr(fsafe.os, "scandir", scandir)
    return failed


def test_leftover_temps_are_found_in_every_one_of_many_sibling_directories(tmp_path: Path) -> None:
    expected = _sessions_with_temps(tmp_path)
    before = len(os.listdir("/proc/self/fd"))
    assert fsafe.leftover_temps(tmp_path) == expected
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("where", ["/.rcs/state", "/sessions/s3"])
def test_a_directory_that_cannot_be_listed_hides_only_what_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    expected = _sessions_with_temps(tmp_path)
    failed = _fails_to_list(monkeypatch, where, PermissionError(errno.EACCES, "Permission denied"))
    before = len(os.listdir("/proc/self/fd"))
    found = fsafe.leftover_temps(tmp_path)
    assert failed == [where]
    hidden = [rel for rel in expected if f"{where}/" in f"/{rel}"]
    assert found == [rel for rel in expected if rel not in hidden] and hidden
    assert len(os.listdir("/proc/self/fd")) == before


def test_an_interrupted_walk_leaves_no_descriptor_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _sessions_with_temps(tmp_path)
    _fails_to_list(monkeypatch, "/sessions/s2/sub", KeyboardInterrupt())
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(KeyboardInterrupt):
        fsafe.leftover_temps(tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before


def test_files_rcs_tui_creates_are_0644_and_temps_have_the_mode_asked(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    old = os.umask(0o022)
    try:
        tree.append(".rcs/logs/new.jsonl", b"x\n")
        with tree.parent(f"{STATE}/a.json") as (dfd, name):
            tmp = fsafe.stage(dfd, name, b"data")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / ".rcs/logs/new.jsonl").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / STATE / tmp).stat().st_mode) == 0o644


def test_a_temp_never_writes_through_a_link_planted_at_its_name(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    os.symlink(victim, tmp_path / STATE / ".a.json.planted.rcs-tui.tmp")
    monkeypatch.setattr(fsafe, "temp_name", lambda name: f".{name}.planted{fsafe.TEMP_SUFFIX}")
    with tree.parent(f"{STATE}/a.json") as (dfd, name), pytest.raises(FileExistsError):
        fsafe.stage(dfd, name, b"ours")
    assert victim.read_bytes() == b"precious"


def test_a_failed_stage_whose_temp_cannot_be_removed_still_reports_the_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)

    def fail(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    no_unlink = _fails(errno.EROFS)

    monkeypatch.setattr(fsafe, "write_all", fail)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        monkeypatch.setattr(fsafe.os, "unlink", no_unlink)
        try:
            with pytest.raises(OSError) as caught:
                fsafe.stage(dfd, name, b"data")
        finally:
            monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC


def test_a_failed_append_that_cannot_be_cut_back_still_reports_the_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "log").write_bytes(b"kept\n")

    def fail(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    no_truncate = _fails(errno.EROFS)

    monkeypatch.setattr(fsafe, "write_all", fail)
    monkeypatch.setattr(fsafe.os, "ftruncate", no_truncate)
    try:
        with pytest.raises(OSError) as caught:
            tree.append(f"{STATE}/log", b"new\n")
    finally:
        monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC


def test_read_at_refuses_a_link_a_fifo_or_a_socket_by_its_project_path(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    os.symlink("a.json", tmp_path / STATE / "l.json")
    os.mkfifo(tmp_path / STATE / "p.json")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / STATE / "s.json"))
    refused = {}
    try:
        with tree.parent(f"{STATE}/l.json") as (dfd, _name):
            for name in ("l.json", "p.json", "s.json"):
                with pytest.raises(Refused) as caught:
                    fsafe.read_at(dfd, name, f"{STATE}/{name}")
                refused[name] = (str(caught.value), caught.value.kind)
    finally:
        sock.close()
    assert refused == {"l.json": (".rcs/state/l.json: is a symlink; not followed", "symlink"),
                       "p.json": (".rcs/state/p.json: not a regular file (a FIFO); not read", "FIFO"),
                       "s.json": (".rcs/state/s.json: not a regular file (a socket); not read", "socket")}


def test_a_file_that_would_block_on_open_is_refused_by_its_project_path(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"{}")
    real = os.open

    def leased(path: object, *args: object, **kwargs: object) -> int:
        if path == "a.json":  # another process holds a lease on it: a non-blocking open would wait
            raise BlockingIOError(errno.EWOULDBLOCK, "Resource temporarily unavailable")
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        monkeypatch.setattr(fsafe.os, "open", leased)
        try:
            with pytest.raises(Refused) as caught:
                fsafe.read_at(dfd, name, f"{STATE}/a.json")
        finally:
            monkeypatch.undo()
    assert (str(caught.value), caught.value.kind) == (".rcs/state/a.json: not a regular file; not read", None)


def test_a_file_opened_for_writing_that_cannot_be_looked_at_reports_why(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "log").write_bytes(b"kept\n")

    def fail(fd: int) -> os.stat_result:
        raise OSError(errno.EIO, "Input/output error")

    with tree.parent(f"{STATE}/log") as (dfd, name):
        monkeypatch.setattr(fsafe.os, "fstat", fail)
        try:
            with pytest.raises(OSError) as caught:
                fsafe.open_leaf(dfd, name, os.O_WRONLY | os.O_APPEND, f"{STATE}/log")
        finally:
            monkeypatch.undo()
    assert caught.value.errno == errno.EIO and (tmp_path / STATE / "log").read_bytes() == b"kept\n"


def test_a_file_set_aside_for_deletion_is_named_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    (tmp_path / STATE / "a.json").write_bytes(b"ours")
    seen: list[list[str]] = []
    real = fsafe._digest_at

    def looking(dfd: int, name: str, rel: str) -> str | None:
        seen.append(os.listdir(tmp_path / STATE))
        return real(dfd, name, rel)

    monkeypatch.setattr(fsafe, "_digest_at", looking)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        assert fsafe.remove_if(dfd, name, digest(b"ours"), "a").applied
    [[aside]] = seen  # a leftover after a crash here tells the doctor which file it was
    assert aside.startswith(".a.json.") and aside.endswith(fsafe.TEMP_SUFFIX)


def test_the_confined_reader_keeps_the_path_of_what_it_could_not_read(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    os.symlink("a.json", tmp_path / STATE / "l.json")
    long = f"{STATE}/{'x' * 300}.json"
    got = {rel: tree.read_file(rel) for rel in (f"{STATE}/none.json", f"{STATE}/l.json", long)}
    for rel, read in got.items():
        assert read.path == tmp_path / rel, rel
    assert got[f"{STATE}/none.json"].exists is False
    assert (got[long].exists, got[long].raw, got[long].error) == (True, None, "unreadable: File name too long")


@needs_renameat2
def test_an_expected_absent_file_the_runtime_creates_at_the_last_instant_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    real = fsafe.renameat2

    def racing(dfd: int, src: str, dst: str, flags: int) -> None:
        if not path.exists():
            path.write_bytes(b"runtime's")
        real(dfd, src, dst, flags)

    monkeypatch.setattr(fsafe, "renameat2", racing)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"ours")
        assert fsafe.swap_in(dfd, name, tmp, None, "a") == fsafe.SwapResult(False, digest(b"runtime's"))
    assert path.read_bytes() == b"runtime's" and _temps(tmp_path) == []


@needs_renameat2
@pytest.mark.parametrize("expect", [None, b"old"])
def test_a_swap_whose_rename_fails_leaves_the_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               expect: bytes | None) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    if expect is not None:
        path.write_bytes(expect)

    broken = _fails(errno.EIO)

    monkeypatch.setattr(fsafe, "renameat2", broken)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        with pytest.raises(OSError) as caught:
            fsafe.swap_in(dfd, name, tmp, None if expect is None else digest(expect), "a")
    assert caught.value.errno == errno.EIO and _temps(tmp_path) == []
    assert (path.read_bytes() if path.exists() else None) == expect


@needs_renameat2
def test_where_the_exchange_is_refused_the_swap_falls_back_and_stops_trying_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"old")
    real = fsafe.renameat2
    exchanges: list[str] = []

    def no_exchange(dfd: int, src: str, dst: str, flags: int) -> None:
        if flags == fsafe._RENAME_EXCHANGE:
            exchanges.append(dst)
            raise OSError(errno.EINVAL, "Invalid argument")
        real(dfd, src, dst, flags)

    monkeypatch.setattr(fsafe, "_exchange_works", True)
    monkeypatch.setattr(fsafe, "renameat2", no_exchange)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"new")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(True, digest(b"old"))
        tmp = fsafe.stage(dfd, name, b"newer")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"new"), "a") == fsafe.SwapResult(True, digest(b"new"))
        tmp = fsafe.stage(dfd, name, b"stale")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"old"), "a") == fsafe.SwapResult(False, digest(b"newer"))
        os.unlink(path)
        os.symlink("elsewhere", path)
        tmp = fsafe.stage(dfd, name, b"x")
        with pytest.raises(Refused) as caught:
            fsafe.swap_in(dfd, name, tmp, digest(b"newer"), f"{STATE}/a.json")
    assert exchanges == ["a.json"]
    assert str(caught.value) == ".rcs/state/a.json: is a symlink; not followed"
    assert os.readlink(path) == "elsewhere" and _temps(tmp_path) == []


@needs_renameat2
def test_an_exchanged_file_that_cannot_be_looked_at_is_swapped_back(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"runtime")

    unreadable = _fails(errno.EIO)

    monkeypatch.setattr(fsafe, "_digest_at", unreadable)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"ours")
        with pytest.raises(OSError) as caught:
            fsafe.swap_in(dfd, name, tmp, digest(b"runtime"), "a")
    assert caught.value.errno == errno.EIO
    assert path.read_bytes() == b"runtime" and _temps(tmp_path) == []


@needs_renameat2
def test_after_an_exchange_a_newer_runtime_write_stands_and_no_temp_is_left(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path)
    path = tmp_path / STATE / "a.json"
    path.write_bytes(b"changed")
    real = fsafe._digest_at

    def runtime_writes(dfd: int, name: str, rel: str) -> str | None:
        (tmp_path / STATE / "new").write_bytes(b"newest")  # the runtime replaces the file after our exchange
        os.replace(tmp_path / STATE / "new", path)
        return real(dfd, name, rel)

    monkeypatch.setattr(fsafe, "_digest_at", runtime_writes)
    with tree.parent(f"{STATE}/a.json") as (dfd, name):
        tmp = fsafe.stage(dfd, name, b"ours")
        assert fsafe.swap_in(dfd, name, tmp, digest(b"planned"), "a") == fsafe.SwapResult(False, digest(b"changed"))
    assert path.read_bytes() == b"newest" and _temps(tmp_path) == []
