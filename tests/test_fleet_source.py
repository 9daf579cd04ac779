"""The fleet reads every project through one `ProjectSource` protocol: the hub runs the same loop for a
local root and a host, and the actions run through the same source. Fake in-memory sources stand in for
both kinds here; the real local source is read against a tree."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from rcs_tui.fleet.actions import ActionError, CliActions
from rcs_tui.fleet.hub import FleetHub
from rcs_tui.fleet.local import LocalProject
from rcs_tui.fleet.projects import Project, parse_project
from rcs_tui.fleet.remote import SshProject
from rcs_tui.fleet.source import CannotRun, ProjectSource, Ran, Unreadable, open_source
from rcs_tui.fleet.transport import Ssh
from rcs_tui.views.snapshot_doc import CONTRACT_VERSION
from tests.statefix import canonical, mode


async def until(predicate, timeout: float = 10.0, step: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(step)


def doc(*active: str, **extra: Any) -> dict[str, Any]:
    return {"version": CONTRACT_VERSION, "kind": "snapshot", "has_rcs": True, "active_set": list(active),
            "attention": {}, **extra}


@dataclass
class FakeSource:
    """A project in memory: each opening plays the next script (documents, then an optional failure)."""

    project: Project
    scripts: list[list[Any]]
    opened: int = 0
    closed_streams: int = 0
    closed: bool = False
    ran: list[list[str]] = field(default_factory=list)
    linger: bool = False  # after its documents the stream stays open, as a follower does

    async def documents(self):
        script = self.scripts[min(self.opened, len(self.scripts) - 1)]
        self.opened += 1
        try:
            for item in script:
                if isinstance(item, BaseException):
                    raise item
                yield item
            if self.linger:
                await asyncio.Event().wait()
        finally:
            self.closed_streams += 1

    def run(self, args: list[str], timeout: float) -> Ran:
        self.ran.append(args)
        return Ran(0, b'{"ok": true}', b"")

    async def close(self) -> None:
        self.closed = True


def fakes(scripts: dict[str, list[list[Any]]], linger: bool = False) -> tuple[dict[str, FakeSource], Any]:
    """An `open_source` for the hub that plays `scripts` (by project key), and the sources it made."""
    made: dict[str, FakeSource] = {}

    def opener(project: Project) -> ProjectSource:
        made[project.key] = FakeSource(project, scripts[project.key], linger=linger)
        return made[project.key]

    return made, opener


LOCAL = parse_project("/srv/api")
REMOTE = parse_project("ssh://devbox/srv/web")


async def test_one_loop_fills_local_and_remote_rows_alike_from_their_sources():
    made, opener = fakes({LOCAL.key: [[doc("forge", partial=True), doc("forge")]], REMOTE.key: [[doc("team")]]},
                         linger=True)
    changes: list[str] = []
    hub = FleetHub([LOCAL, REMOTE], lambda row: changes.append(row.project.key), open_source=opener)
    hub.start()
    try:
        rows = hub.rows
        await until(lambda: rows[LOCAL.key].doc is not None and "partial" not in rows[LOCAL.key].doc
                    and rows[REMOTE.key].doc is not None)
        assert set(made) == {LOCAL.key, REMOTE.key}  # every kind goes through its source
        assert rows[LOCAL.key].doc["active_set"] == ["forge"] and rows[REMOTE.key].doc["active_set"] == ["team"]
        assert all(r.connected and r.error is None and r.looked for r in rows.values())
        assert changes.count(LOCAL.key) == 2 and changes.count(REMOTE.key) == 1
    finally:
        await hub.stop()
    assert all(s.closed for s in made.values())  # stop lets each source end what it left behind
    assert all(s.closed_streams == s.opened == 1 for s in made.values())  # the cancelled reads were closed


async def test_a_failure_is_the_rows_reason_and_the_source_is_opened_again():
    made, opener = fakes({REMOTE.key: [[Unreadable("unreachable: ssh: no route to host")],
                                                 [doc("forge")]]})
    hub = FleetHub([REMOTE], open_source=opener, max_backoff=0.1)
    row = hub.rows[REMOTE.key]
    seen: list[str | None] = []
    hub.on_change = lambda r: seen.append(r.error)
    hub.start()
    try:
        await until(lambda: row.doc is not None, timeout=5)
        assert seen[0] == "unreachable: ssh: no route to host"
        assert row.error is None and row.error_since is None and made[REMOTE.key].opened >= 2
    finally:
        await hub.stop()


async def test_once_makes_one_attempt_per_project():
    made, opener = fakes({LOCAL.key: [[Unreadable(f"no .rcs/ in {LOCAL.path}")], [doc()]]})
    hub = FleetHub([LOCAL], open_source=opener, once=True, max_backoff=0.01)
    hub.start()
    await asyncio.wait(hub.tasks, timeout=5)
    assert all(t.done() for t in hub.tasks)
    assert made[LOCAL.key].opened == 1 and hub.rows[LOCAL.key].error == f"no .rcs/ in {LOCAL.path}"
    await hub.stop()


async def test_a_document_the_row_cannot_show_ends_the_stream_with_its_reason():
    made, opener = fakes({REMOTE.key: [[{"version": "0.9", "kind": "snapshot"}, doc("never")]]})
    hub = FleetHub([REMOTE], open_source=opener, once=True)
    hub.start()
    await asyncio.wait(hub.tasks, timeout=5)
    row = hub.rows[REMOTE.key]
    assert row.doc is None and row.error.startswith("host speaks snapshot contract 0.9")
    assert made[REMOTE.key].closed_streams == 1  # closed at once, not left to the garbage collector
    await hub.stop()


async def test_a_source_that_breaks_costs_only_its_row():
    made, opener = fakes({LOCAL.key: [[RuntimeError("disk on fire")]], REMOTE.key: [[doc("a")]]})
    hub = FleetHub([LOCAL, REMOTE], open_source=opener, once=True)
    hub.start()
    await until(lambda: hub.rows[REMOTE.key].doc is not None and hub.rows[LOCAL.key].error is not None)
    assert hub.rows[LOCAL.key].error == "read error: RuntimeError: disk on fire"
    await hub.stop()


def test_actions_run_through_the_source():
    source = FakeSource(REMOTE, [[]])
    out = CliActions(REMOTE, source=source).undo(dry_run=True)
    assert out == {"ok": True}
    assert source.ran == [["undo", "--dry-run", "--root", REMOTE.path, "--json"]]


@pytest.mark.parametrize(("error", "message"), [
    (TimeoutError("ran long"), "no answer from devbox within 60s; the action may or may not have run"),
    (CannotRun("cannot run ssh: No such file or directory"), "cannot run ssh: No such file or directory"),
])
def test_an_action_that_cannot_finish_says_why(error, message):
    class Failing(FakeSource):
        def run(self, args, timeout):
            raise error

    with pytest.raises(ActionError, match=message):
        CliActions(REMOTE, source=Failing(REMOTE, [[]])).journal()


def test_open_source_picks_the_kind_from_the_project():
    assert isinstance(open_source(LOCAL), LocalProject)
    assert isinstance(open_source(REMOTE, ssh=Ssh()), SshProject)


async def test_the_local_source_gives_a_first_look_then_the_whole_project(tmp_path):
    root = tmp_path / "api"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    stream = LocalProject(parse_project(str(root)), poll=True).documents()
    try:
        first = await stream.__anext__()
        full = await stream.__anext__()
    finally:
        await stream.aclose()
    assert first["partial"] is True and "partial" not in full
    assert full["active_set"] == ["forge"]


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: None, "no such directory: {p}"),
    (lambda p: p.mkdir(), "no .rcs/ in {p}"),
])
async def test_the_local_source_says_why_a_root_cannot_be_read(tmp_path, make, reason):
    root = tmp_path / "gone"
    make(root)
    with pytest.raises(Unreadable, match=reason.format(p=root)):
        async for _ in LocalProject(parse_project(str(root))).documents():
            pass
