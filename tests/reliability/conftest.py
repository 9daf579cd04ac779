"""Fixtures for the reliability suite: a busy `.rcs` tree and the stand-in runtime writer process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import statefix as sf
from tests.fixtures_tasks import make_task

WRITER = Path(__file__).with_name("runtime_writer.py")
SESSION = "s1"
MODES = ("forge", "ultrawork", "team")


def build_busy_tree(root: Path) -> Path:
    """Root and one session, three active modes each, canonical sets, two tasks in `codegen`."""
    for sid in (None, SESSION):
        for m in MODES:
            sf.mode(root, m, sid, current_phase="executing", iteration=1, max_iterations=10)
        sf.canonical(root, list(MODES), sid)
    for tid in ("t1", "t2"):
        make_task(root, tid, "codegen")
    return root


def writer_paths() -> list[str]:
    """Files the stand-in runtime rewrites: every mode file, both canonical sets, task t1's state."""
    out = []
    for base in (".rcs/state", f".rcs/state/sessions/{SESSION}"):
        out += [f"{base}/{m}-state.json" for m in MODES] + [f"{base}/skill-active-state.json"]
    return out + [".rcs/tasks/t1/state.json"]


@dataclass
class WriterRun:
    """A running writer process and where it logs."""

    proc: subprocess.Popen
    log: Path

    def wait(self, timeout: float) -> list[dict]:
        assert self.proc.wait(timeout=timeout) == 0, self.proc.stderr.read().decode() if self.proc.stderr else ""
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


def start_writer(root: Path, seconds: float, rate: float, seed: int = 1,
                 paths: list[str] | None = None) -> WriterRun:
    log = root.parent / f"writer-{seed}.log"
    proc = subprocess.Popen([sys.executable, str(WRITER), str(root), str(seconds), str(rate), str(seed), str(log),
                             json.dumps(paths or writer_paths())], stderr=subprocess.PIPE)
    return WriterRun(proc, log)


@pytest.fixture
def busy_tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    return build_busy_tree(root)


@pytest.fixture
def slow_enabled(request) -> bool:
    return bool(request.config.getoption("--run-slow"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A root with forge and ultrawork active and listed (a module's own `project` fixture takes its place)."""
    root = tmp_path / "p"
    sf.mode(root, "forge", current_phase="executing", iteration=1)
    sf.mode(root, "ultrawork")
    sf.canonical(root, ["forge", "ultrawork"])
    return root
