"""Shared fixtures: run the installed `rcs-tui` as a subprocess, hash trees, keep the user's env out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import rcs_tui

RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")
# The directory holding the `rcs_tui` these tests import: the work tree, or mutmut's mutated copy.
CODE_ROOT = str(Path(rcs_tui.__file__).resolve().parent.parent)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)

    @property
    def error(self) -> str:
        return json.loads(self.stderr.strip().splitlines()[-1])["error"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path_factory):
    """No test sees the developer's session ids, RCS_ROOT or rp1 database.

    Every `rcs-tui` subprocess imports the same code as the test process (PYTHONPATH first), so a
    mutation run tests its mutants through the CLI too, not the installed tree.
    """
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (CODE_ROOT, os.environ.get("PYTHONPATH")) if p))
    for var in ("RCS_ROOT", "RCS_SESSION_ID", "CODEX_SESSION_ID", "SESSION_ID", "NO_COLOR", "RP1_DB"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RP1_DB", str(tmp_path_factory.mktemp("rp1home") / "rp1.db"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv("RCS_TUI_CONFIG", str(tmp_path_factory.getbasetemp() / "no-config.toml"))  # defaults only


@pytest.fixture
def run_cli():
    """Run `rcs-tui ARGS...` as a real subprocess; returns code, stdout, stderr.

    With RCS_TUI_MUTATION_INPROCESS set (a mutation run that should judge by the in-process tests alone),
    the test stops there as skipped: a command takes a second or more under load, and a mutation run repeats
    it for every mutant of every function the test reaches."""

    def _run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             input: str | None = None, timeout: float = 60) -> CliResult:
        if os.environ.get("RCS_TUI_MUTATION_INPROCESS") and os.environ.get("MUTANT_UNDER_TEST"):
            pytest.skip("runs rcs-tui as a subprocess; this mutation run judges by in-process tests")
        full_env = {k: v for k, v in os.environ.items()}
        if env:
            full_env.update(env)
        proc = subprocess.run([RCS_TUI, *args], cwd=cwd, env=full_env, input=input,
                              capture_output=True, text=True, timeout=timeout)
        # Never a traceback and never an unexplained exception, in any test that runs the command.
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return _run


def tree_digest(path: Path) -> dict[str, str]:
    """Map of relative path -> sha256 for every file under `path` (symlinks by target text)."""
    out: dict[str, str] = {}
    for p in sorted(path.rglob("*")):
        rel = str(p.relative_to(path))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def digest_tree():
    return tree_digest


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the long variants marked `slow` (100 MB inputs, long stress runs)")


# Modules holding the longest tests (seconds to a minute each). Under pytest-xdist they are handed out first,
# after the `slow` variants, so that no worker starts one when the others are nearly done.
LONG_MODULES = ("test_concurrent_writer.py", "test_crash_safety.py", "test_kill_every_syscall.py",
                "test_fleet_ssh.py", "test_rp1_status_equivalence.py", "test_watcher_batches.py")


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` are skipped unless --run-slow is given; under xdist the long ones go first."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects alike, so they agree on the order
        items.sort(key=lambda item: ("slow" not in item.keywords, item.path.name not in LONG_MODULES))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long variant: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# -- snapshot files that no test compared against ---------------------------------------------------------
# syrupy (under pytest-textual-snapshot) fails a run that leaves a snapshot file unused, but not under
# pytest-xdist, where no process sees every comparison. There the workers note each comparison and which
# tests they were given, and the controller makes the same check at the end of a run of whole modules.
SNAPSHOTS = Path(__file__).with_name("__snapshots__")
_SNAPSHOT_LOG = "RCS_TUI_SNAPSHOT_LOG"


def _snapshot_note(*fields: str) -> None:
    log = os.environ.get(_SNAPSHOT_LOG)
    if log:
        with open(log, "a", encoding="utf-8") as fh:  # one short line per write: appends do not interleave
            fh.write("\t".join(fields) + "\n")


def _snapshot_name(item) -> tuple[str, str]:
    """(snapshot folder, file stem) syrupy gives the comparison of test `item`."""
    return item.path.stem, ".".join(item.nodeid.split("::")[1:])


@pytest.fixture
def snap_compare(snap_compare, request):
    """pytest-textual-snapshot's `snap_compare`, noting the snapshot file it compares against."""

    def compare(*args, **kwargs):
        _snapshot_note("used", *_snapshot_name(request.node))
        return snap_compare(*args, **kwargs)

    return compare


def pytest_configure(config):
    if getattr(config.option, "numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER"):
        fd, log = tempfile.mkstemp(prefix="rcs-tui-snapshots-", suffix=".log")
        os.close(fd)
        os.environ[_SNAPSHOT_LOG] = log  # the workers inherit it


def pytest_collection_finish(session):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for item in session.items:
            if (SNAPSHOTS / item.path.stem).is_dir():
                _snapshot_note("ran", *_snapshot_name(item))


def pytest_runtest_logreport(report):
    if report.skipped and os.environ.get("PYTEST_XDIST_WORKER"):  # a skipped test's file is not unused
        path, _, rest = report.nodeid.partition("::")
        _snapshot_note("used", Path(path).stem, rest.replace("::", "."))


def pytest_deselected(items):
    for item in items:
        _snapshot_note("deselected", item.path.stem, "")


def pytest_sessionfinish(session, exitstatus):
    log = os.environ.get(_SNAPSHOT_LOG)
    if not log or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ.pop(_SNAPSHOT_LOG)
    try:
        notes = [line.split("\t") for line in Path(log).read_text(encoding="utf-8").splitlines()]
    finally:
        os.unlink(log)
    config = session.config
    partial = config.option.keyword or any("::" in arg for arg in config.args)
    if exitstatus != 0 or partial or getattr(config.option, "update_snapshots", False):
        return  # judged only for a passing run of whole modules that leaves the files as they are
    used = {(folder, name) for kind, folder, name in notes if kind == "used"}
    whole = {folder for kind, folder, _ in notes if kind == "ran"} - {f for k, f, _ in notes if k == "deselected"}
    unused = sorted(f"{svg.parent.name}/{svg.name}" for folder in whole for svg in (SNAPSHOTS / folder).glob("*.svg")
                    if (folder, svg.stem) not in used)
    if unused:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{len(unused)} snapshot file(s) unused (remove them, or run without -n and --snapshot-update):",
                 *unused]
        if reporter:
            reporter.write_sep("-", "unused snapshot files", red=True)
            for line in lines:
                reporter.write_line(line)
        else:
            print(*lines, sep="\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def utc(monkeypatch):
    """Times of day on screen are shown in UTC, whatever this machine's zone (pictures and texts that hold
    clock times come out the same everywhere)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()
