"""Local fleet: several projects, attention order, unreadable rows, alerts once per transition, the TUI."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from rcs_tui.fleet.alerts import AlertSettings, AlertTracker
from rcs_tui.fleet.projects import ProjectSpecError, expand_projects, parse_project
from rcs_tui.fleet.rows import Row, once_json
from rcs_tui.project.feed import SnapshotFeed
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.ui.linetable import LineTable
from rcs_tui.views.snapshot_doc import iso
from tests.statefix import canonical, mode, write

NOW = 1_795_000_000.0


def waiting(root: Path) -> Path:
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    mode(root, "autopilot", active=False, lifecycle_outcome="askuserQuestion", question="which db?")
    return root


def failed(root: Path) -> Path:
    mode(root, "ultrawork", active=False, lifecycle_outcome="failed")
    return root


def stale(root: Path) -> Path:
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team"])
    return root


def running(root: Path) -> Path:
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    return root


def idle(root: Path) -> Path:
    (root / ".rcs" / "state").mkdir(parents=True)
    return root


def fleet_dir(tmp_path: Path) -> Path:
    base = tmp_path / "code"
    for name, build in (("api", waiting), ("billing", failed), ("docs", stale), ("web", running), ("notes", idle)):
        build(base / name)
    (base / "not-a-project").mkdir()
    return base


async def until(predicate, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


class TestProjects:
    def test_glob_keeps_only_directories_with_rcs(self, tmp_path):
        base = fleet_dir(tmp_path)
        found, problems = expand_projects([f"{base}/*", str(base / "web")])
        assert problems == []
        assert [p.name for p in found] == ["api", "billing", "docs", "notes", "web"]

    def test_projects_with_the_same_last_part_are_told_apart_by_their_paths(self):
        found, _ = expand_projects(["/srv/work/api", "/home/me/old/api", "ssh://devbox/srv/work/api", "/srv/web"])
        # The same path on another host keeps its name (the host column tells them apart).
        assert [(p.name, p.host_label) for p in found] == [
            ("work/api", "local"), ("old/api", "local"), ("work/api", "devbox"), ("web", "local")]
        assert [p.key for p in found][:2] == ["/srv/work/api", "/home/me/old/api"]

    @pytest.mark.parametrize("spec,host,user,port,path", [
        ("ssh://devbox/home/me/work/web", "devbox", None, None, "/home/me/work/web"),
        ("ssh://me@build-box:2222/work/x", "build-box", "me", 2222, "/work/x"),
        ("ssh://DevBox/~/proj", "DevBox", None, None, "~/proj"),
    ])
    def test_ssh_urls(self, spec, host, user, port, path):
        p = parse_project(spec)
        assert (p.host, p.user, p.port, p.path, p.remote) == (host, user, port, path, True)

    @pytest.mark.parametrize("spec,key", [
        ("ssh://devbox/~/proj", "ssh://devbox/~/proj"),
        ("ssh://me@box:2222/tmp/a b/p%23x", "ssh://me@box:2222/tmp/a%20b/p%23x"),
        ("ssh://box/srv/q%3Fz?rcs-tui=/opt/my tools/rcs-tui", "ssh://box/srv/q%3Fz?rcs-tui=/opt/my%20tools/rcs-tui"),
        ("ssh://box/srv/x?rcs-tui=a%26b", "ssh://box/srv/x?rcs-tui=a%26b"),
    ])
    def test_a_projects_key_reads_back_as_the_same_project(self, spec, key):
        """The key is what `--json` prints and an alert command gets: given back as `--project`, it names
        the same host, path and command."""
        p = parse_project(spec)
        again = parse_project(p.key)
        assert p.key == key
        assert (again.host, again.user, again.port, again.path, again.command) == (p.host, p.user, p.port,
                                                                                   p.path, p.command)

    @pytest.mark.parametrize("spec,message", [
        ("ssh:///path", "no usable host name"), ("ssh://host", "no project path"),
        ("http://host/x", "only local paths and ssh://"), ("ssh://host:99999/x", "bad port"),
        ("ssh://host/srv/proj#2", r"a '#' ends the path in an ssh:// URL; write it as %23"),
        ("ssh://host/srv/proj?branch=main", r"unknown option 'branch' after '\?' \(only rcs-tui=COMMAND"),
    ])
    def test_bad_specs_say_why(self, spec, message):
        with pytest.raises(ProjectSpecError, match=message):
            parse_project(spec)


class TestOnce:
    def test_line_names_the_projects_that_need_you(self, run_cli, tmp_path):
        base = fleet_dir(tmp_path)
        res = run_cli("fleet", "--once", "--project", f"{base}/*", "--project", str(base / "not-a-project"))
        assert res.code == 0, res.stderr
        assert res.stdout == ("fleet: 4 of 6 need you: api (1 waiting), billing (1 failed), docs (1 stale), "
                              f"not-a-project (no .rcs/ in {base / 'not-a-project'})\n")

    def test_counts_what_waits_in_any_session_not_only_the_current_one(self, run_cli, tmp_path):
        root = idle(tmp_path / "api")
        mode(root, "forge", session="s7", active=False, lifecycle_outcome="askuserQuestion")
        res = run_cli("fleet", "--once", "--project", str(root))
        assert res.code == 0, res.stderr
        assert res.stdout == "fleet: 1 of 1 need you: api (1 waiting)\n"

    def test_json_is_sorted_by_attention_and_projects_come_from_the_config(self, run_cli, tmp_path):
        base = fleet_dir(tmp_path)
        cfg = tmp_path / "config.toml"
        cfg.write_text(f'projects = ["{base}/*"]\n')
        res = run_cli("fleet", "--once", "--json", env={"RCS_TUI_CONFIG": str(cfg)})
        assert res.code == 0, res.stderr
        assert [(r["name"], r["state"], r["needs_you"]) for r in res.json] == [
            ("api", "waiting", True), ("billing", "failed", True), ("docs", "trouble", True),
            ("web", "running", False), ("notes", "idle", False)]
        assert res.json[0]["attention"]["waiting"] == ["root/autopilot"]
        assert res.json[2]["attention"]["stale"] == ["root/team"]

    def test_no_projects_is_an_error_that_says_where_to_add_them(self, run_cli, tmp_path):
        res = run_cli("fleet", "--once")
        assert res.code == 1 and res.error.startswith("no projects: add projects = [...] to ")

    def test_bad_project_url_is_an_error(self, run_cli):
        res = run_cli("fleet", "--once", "--project", "ftp://x/y")
        assert res.code == 1 and "only local paths and ssh://HOST/PATH URLs are supported" in res.error


def row_with(attention: dict[str, list[str]], name: str = "api") -> Row:
    row = Row(parse_project(f"/srv/{name}"))
    row.take({"version": "1.0", "kind": "snapshot", "attention": attention}, NOW)
    return row


class TestWorkers:
    def test_a_silent_worker_is_not_counted_alive_the_console_says_silent_too(self):
        from rcs_tui.state.team import Worker
        from rcs_tui.ui.console.team import heartbeat

        beats = {"w1": iso(NOW - 10), "w2": iso(NOW - 600), "w3": iso(NOW - 5)}
        workers = [{"name": n, "state": "working", "current_task_id": None, "last_turn_at": at, "alive": True,
                    "dead_reason": "pid 7 is not running" if n == "w3" else None} for n, at in beats.items()]
        row = Row(parse_project("/srv/api"))
        row.take({"version": "1.1", "kind": "snapshot", "team": {"t": {"workers": workers}}}, NOW)
        assert row.worker_conditions(NOW) == {"alive": 1, "silent": 1, "dead": 1}
        assert str(row.cells(NOW)["workers"]) == "1♥ 1◌ 1✖"
        console = [str(heartbeat(Worker(w["name"], alive=True, last_turn_at=w["last_turn_at"],
                                        pid=7 if w["dead_reason"] else None,
                                        pid_running=False if w["dead_reason"] else None), NOW)) for w in workers]
        assert console == ["♥ alive", "◌ silent 10m", "✖ dead"]
        assert row.worker_conditions(NOW - 590)["alive"] == 2  # ten minutes earlier w2 was still beating

    def test_a_host_on_contract_1_0_without_the_alive_flag_is_judged_by_its_beat(self):
        workers = [{"name": "w1", "last_turn_at": iso(NOW - 10), "dead_reason": None},
                   {"name": "w2", "last_turn_at": iso(NOW - 600), "dead_reason": None}]
        row = Row(parse_project("/srv/api"))
        row.take({"version": "1.0", "kind": "snapshot", "team": {"t": {"workers": workers}}}, NOW)
        assert row.worker_conditions(NOW) == {"alive": 1, "silent": 1}


class TestAlerts:
    async def test_closing_the_fleet_ends_a_notifier_still_running(self, tmp_path):
        tracker = AlertTracker(AlertSettings(min_interval=0))
        pidfile = tmp_path / "pid"
        tracker._spawn(["/bin/sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"], None)
        await until(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
        pid = int(pidfile.read_text())
        started = time.monotonic()
        await tracker.drain(grace=0.2)
        assert time.monotonic() - started < 5
        assert not tracker._tasks
        with pytest.raises(ProcessLookupError):  # killed and reaped, not left running after the fleet
            os.kill(pid, 0)

    @pytest.mark.parametrize(("command", "timeout", "delivery"), [
        ("true", 5.0, "sent"),
        ("exit 127", 5.0, "failed: notify command exit status 127"),
        ("exec sleep 30", 0.3, "failed: notify command gave no answer in 0.3s and was stopped"),
    ])
    async def test_an_alert_says_how_its_delivery_went(self, monkeypatch, command, timeout, delivery):
        """A notifier that fails (exit 127: not found) or hangs is never shown as sent."""
        import rcs_tui.fleet.alert_channels as channels_mod

        monkeypatch.setattr(channels_mod, "NOTIFY_TIMEOUT", timeout)
        tracker = AlertTracker(AlertSettings(command=command, bell=False, min_interval=0, retries=0))
        tracker.observe(row_with({}))
        (alert,) = tracker.observe(row_with({"waiting": ["root/autopilot"]}))
        assert alert.delivery == "sending"
        await until(lambda: alert.delivery != "sending")
        assert alert.delivery == delivery
        assert alert.as_json()["delivery"] == delivery

    def test_each_transition_alerts_once(self):
        clock = [NOW]
        tracker = AlertTracker(AlertSettings(min_interval=0), clock=lambda: clock[0])
        assert tracker.observe(row_with({"waiting": ["root/autopilot"]})) == []  # the first look is the baseline
        assert tracker.observe(row_with({"waiting": ["root/autopilot"]})) == []
        fresh = tracker.observe(row_with({"waiting": ["root/autopilot"], "dead": ["team/worker-1"],
                                          "stale": ["root/team"], "failed": ["s1/forge"]}))
        assert sorted((a.kind, a.member) for a in fresh) == [
            ("dead", "team/worker-1"), ("failed", "s1/forge"), ("stale", "root/team")]
        assert tracker.observe(row_with({"waiting": ["root/autopilot"], "dead": ["team/worker-1"],
                                         "stale": ["root/team"], "failed": ["s1/forge"]})) == []
        assert tracker.observe(row_with({})) == []  # something stopped needing you: no alert
        again = tracker.observe(row_with({"waiting": ["root/autopilot"], "resurrected": ["root/forge"]}))
        assert sorted((a.kind, a.member) for a in again) == [("resurrected", "root/forge"),
                                                            ("waiting", "root/autopilot")]
        assert len(tracker.alerts) == 5

    def test_what_changes_between_the_first_look_and_the_full_read_is_announced(self, tmp_path):
        """A full read can wait behind many others: a root member that starts waiting meanwhile was not
        waiting when the fleet first looked, so it is news; another session's, which the first look did not
        read, is not."""
        root, tracker, feed, row = first_looked_at(tmp_path)
        mode(root, "autopilot", active=False, lifecycle_outcome="askuserQuestion")  # at root, after the look
        row.take(feed.document(), NOW)
        assert sorted(row.attention["waiting"]) == ["root/autopilot", "s7/forge"]
        assert [(a.kind, a.member) for a in tracker.observe(row)] == [("waiting", "root/autopilot")]

    def test_a_partial_first_look_is_not_the_baseline(self, tmp_path):
        """Sessions a quick first look did not read yet are not announced as new when the full read lands."""
        root, tracker, feed, row = first_looked_at(tmp_path)
        assert row.doc["partial"] is True and row.attention["waiting"] == []
        row.take(feed.document(), NOW)
        assert "partial" not in row.doc and row.attention["waiting"] == ["s7/forge"]
        assert tracker.observe(row) == []  # already waiting when the fleet started: on screen, not announced
        changed = mode(root, "ultrawork", session="s7", active=False, lifecycle_outcome="askuserQuestion")
        row.take(feed.document([changed]), NOW)
        assert [(a.kind, a.member) for a in tracker.observe(row)] == [("waiting", "s7/ultrawork")]

    def test_a_hosts_values_of_the_wrong_type_are_not_read_as_the_contracts(self):
        """Text where a list goes is no list of its characters (no "8 failed" from "notalist"), and what
        `fleet --once --json` passes on keeps the contract's types."""
        row = Row(parse_project("ssh://devbox/srv/api"))
        row.take({"version": "1.3", "kind": "snapshot", "has_rcs": True,
                  "attention": {"failed": "notalist", "waiting": ["s1/forge", 7]},
                  "active_set": {"x": 1}, "last_activity": 12}, NOW)
        assert row.attention["failed"] == [] and row.attention["waiting"] == ["s1/forge"]
        [out] = once_json([row])
        assert (out["active_set"], out["last_activity"], out["attention"]["failed"]) == ([], None, [])
        row.take({"version": "1.3", "kind": "snapshot", "has_rcs": True, "attention": {},
                  "active_set": ["team", 3], "last_activity": "2026-11-28T12:00:00.000Z"}, NOW)
        [out] = once_json([row])
        assert (out["active_set"], out["last_activity"]) == (["team"], "2026-11-28T12:00:00.000Z")

    def test_a_remote_cannot_claim_a_partial_document(self):
        row = Row(parse_project("ssh://devbox/srv/api"))
        row.take({"version": "1.0", "kind": "snapshot", "partial": True, "attention": {}}, NOW)
        assert "partial" not in row.doc

    def test_rate_limited_per_project_but_listed(self):
        clock = [NOW]
        rang = []
        tracker = AlertTracker(AlertSettings(min_interval=30), bell=lambda: rang.append(1), clock=lambda: clock[0])
        tracker.observe(row_with({}))
        first = tracker.observe(row_with({"waiting": ["root/a"]}))
        clock[0] += 5
        second = tracker.observe(row_with({"waiting": ["root/a", "root/b"]}))
        clock[0] += 30
        third = tracker.observe(row_with({"waiting": ["root/a", "root/b", "root/c"]}))
        assert [a.sent for a in first + second + third] == [True, False, True]
        assert len(rang) == 2
        assert tracker.observe(row_with({}, name="other")) == []  # another project has its own baseline

    def test_kinds_not_chosen_are_not_alerts(self):
        tracker = AlertTracker(AlertSettings(kinds=("waiting",), min_interval=0), clock=lambda: NOW)
        tracker.observe(row_with({}))
        assert tracker.observe(row_with({"dead": ["t/w1"]})) == []

    def test_command_gets_project_kind_and_member(self, tmp_path):
        out = tmp_path / "alert.txt"
        fields = '"$RCS_ALERT_PROJECT" "$RCS_ALERT_KIND" "$RCS_ALERT_MEMBER" "$RCS_ALERT_HOST"'
        cmd = f'printf "%s|%s|%s|%s" {fields} > {out}'
        tracker = AlertTracker(AlertSettings(command=cmd, bell=False, min_interval=0), clock=lambda: NOW)
        tracker.observe(row_with({}))
        tracker.observe(row_with({"waiting": ["root/\x1b[31mautopilot"]}))
        assert out.read_text() == "api|waiting|root/autopilot|local"

    def test_command_gets_the_projects_root_and_its_ssh_address(self, tmp_path):
        out = tmp_path / "alert.txt"
        cmd = f'printf "%s|%s\\n" "$RCS_ALERT_ROOT" "$RCS_ALERT_URL" >> {out}'
        tracker = AlertTracker(AlertSettings(command=cmd, bell=False, min_interval=0), clock=lambda: NOW)
        remote = Row(parse_project("ssh://ops@box:2222/srv/api"))
        for row in (row_with({}), remote):
            row.take({"version": "1.0", "kind": "snapshot", "attention": {}}, NOW)
            tracker.observe(row)
        for row in (row_with({"waiting": ["root/forge"]}), remote):
            row.take({"version": "1.0", "kind": "snapshot", "attention": {"waiting": ["root/forge"]}}, NOW)
            tracker.observe(row)
        deadline = time.time() + 10
        while len(out.read_text().splitlines() if out.exists() else []) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert sorted(out.read_text().splitlines()) == ["/srv/api|", "/srv/api|ssh://ops@box:2222/srv/api"]


class TestFleetApp:
    async def test_rows_follow_local_changes_and_a_new_waiting_member_alerts_once(self, tmp_path):
        base = fleet_dir(tmp_path)
        found, _ = expand_projects([f"{base}/*"])
        log = tmp_path / "alerts.log"
        settings = AlertSettings(command=f'echo "$RCS_ALERT_PROJECT $RCS_ALERT_KIND $RCS_ALERT_MEMBER" >> {log}',
                                 bell=False, min_interval=0)
        app = FleetApp(found, alerts=settings)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(lambda: all(r.doc is not None for r in app.rows.values()))  # a first look, at least
            table = app.screen.query_one("#fleet-table", LineTable)
            await until(lambda: [Path(k).name for k in table.keys] == ["api", "billing", "docs", "web", "notes"])
            web = str(base / "web")
            mode(base / "web", "autopilot", active=False, lifecycle_outcome="askuserQuestion")
            await until(lambda: app.rows[web].rank == 0)
            await until(lambda: log.exists() and log.read_text() == "web waiting root/autopilot\n")
            await until(lambda: [Path(k).name for k in table.keys][:2] == ["api", "web"])  # waiting first, by name
            write(base / "web" / ".rcs" / "state" / "forge-state.json", {"active": True, "current_phase": "verify"})
            await until(lambda: app.rows[web].doc["scopes"][0]["modes"]["forge"]["phase"] == "verify")
            await pilot.pause(0.2)
            assert log.read_text() == "web waiting root/autopilot\n"  # no repeat on an unrelated change
            await pilot.press("2")
            alerts = app.screen.query_one("#alerts-table", LineTable)
            assert alerts.row_count == 1
            assert alerts.drawn(alerts.keys[0])[1:5] == ["web", "local", "waiting", "root/autopilot"]

    async def test_a_tick_while_the_screen_is_taken_down_draws_nothing_and_does_not_crash(self, tmp_path):
        """Timers keep firing while the fleet exits and its screen's widgets go: the alerts' and rows' ticks
        then find no table to draw into (it ended the fleet with a traceback, seen once in a full test run)."""
        base = fleet_dir(tmp_path)
        found, _ = expand_projects([f"{base}/*"])
        app = FleetApp(found, alerts=AlertSettings(bell=False, min_interval=0))
        async with app.run_test(size=(120, 36)) as pilot:
            await until(lambda: all(r.doc is not None for r in app.rows.values()))
            mode(base / "web", "autopilot", active=False, lifecycle_outcome="askuserQuestion")
            await until(lambda: bool(app.tracker.alerts))
            for table in app.screen.query("LineTable"):
                await table.remove()
            app._alert_tick()
            app._redraw_dirty()
            await pilot.pause()

    async def test_filter_and_console_commands(self, tmp_path):
        base = fleet_dir(tmp_path)
        found, _ = expand_projects([f"{base}/*", "ssh://me@devbox:2222/srv/app"])
        app = FleetApp(found, live=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("slash", "b", "i", "l")
            await pilot.pause()
            table = app.screen.query_one("#fleet-table", LineTable)
            assert table.row_count == 1
            await pilot.press("escape")
            await pilot.pause()
            assert table.row_count == 6
        local = app.console_argv(parse_project(str(base / "web")))
        assert local[-3:] == ["console", "--root", str(base / "web")]
        remote = app.console_argv(parse_project("ssh://me@devbox:2222/srv/app"))
        assert remote[:2] == ["ssh", "-t"] and "-T" not in remote
        assert remote[-3:] == ["me@devbox", "--", "rcs-tui console --root /srv/app"]


def first_looked_at(tmp_path: Path) -> tuple[Path, AlertTracker, SnapshotFeed, Row]:
    """A project waiting in session s7, a tracker and a row that has seen only its quick first look."""
    root = idle(tmp_path / "api")
    mode(root, "forge", session="s7", active=False, lifecycle_outcome="askuserQuestion")
    tracker = AlertTracker(AlertSettings(min_interval=0))
    feed = SnapshotFeed(root)
    row = Row(parse_project(str(root)))
    row.take(feed.first_look(), NOW)
    assert tracker.observe(row) == []
    return root, tracker, feed, row


class TestFleetKeys:
    async def test_n_says_when_the_filter_hides_every_project_that_needs_you(self, tmp_path):
        app = snapshot_app(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("slash", "n", "o", "t", "e", "s", "enter")  # "notes": idle, needs nothing
            await pilot.pause()
            await pilot.press("n")
            await pilot.pause()
            need = sum(r.needs_you_now for r in app.rows.values())
            assert need > 0
            assert [str(n.message) for n in app._notifications][-1] == (
                f"{need} projects need you, hidden by the filter: esc clears it")

    async def test_y_copies_the_selected_projects_address_and_colon_opens_the_palette(self, tmp_path):
        app = snapshot_app(tmp_path)
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            await pilot.press("y")
            await pilot.pause()
            assert copied == [app.selected_key()]
            assert [str(n.message) for n in app._notifications][-1] == f"copied:\n{copied[0]}"
            await pilot.press("colon")
            await pilot.pause()
            assert type(app.screen).__name__ == "CommandPalette"

    async def test_a_project_view_offers_no_key_of_the_list(self, tmp_path):
        app = snapshot_app(tmp_path)
        from rcs_tui.ui.fleet.project import ProjectScreen

        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            await app.push_screen(ProjectScreen(app.selected_key()))
            await pilot.pause()
            for action in ("details", "filter", "clear_filter", "tab"):  # the footer offered i and /, dead there
                assert app.check_action(action, ()) is False
            assert app.check_action("acknowledge", ()) is True


def snapshot_app(tmp_path: Path) -> FleetApp:
    """The fleet with fixed documents and clock (no watcher): what the snapshot tests draw."""
    base = fleet_dir(tmp_path)
    found, _ = expand_projects([f"{base}/*", "ssh://devbox/home/me/work/web", "ssh://me@build-box:2222/work/x"])
    app = FleetApp(found, live=False, clock=lambda: NOW)
    for i, project in enumerate(found):
        row = app.rows[project.key]
        if project.host == "devbox":
            row.fail("unreachable: ssh: connect to host devbox port 22: Connection refused", NOW - 125)
            continue
        root = base / "api" if project.remote else Path(project.path)
        doc = SnapshotFeed(root, clock=lambda: NOW).document()
        doc["last_activity"] = iso(NOW - 60 * (i + 1))
        row.take(doc, NOW)
    return app


def painted(table: LineTable) -> int:
    """Paint every line the table shows, as the screen's next refresh does, and say how many rows have been
    drawn since mount. A line already painted costs nothing (its row's strip is kept), so the count is what
    the updates so far cost, whether or not the screen has refreshed yet."""
    for y in range(table.size.height):
        table.render_line(y)
    return table.renders


def on_screen(app: FleetApp) -> str:
    """The terminal's text as the screen paints it now (a widget line not refreshed keeps its old text)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


class TestTableRedraw:
    async def test_a_change_redraws_its_row_only_and_an_age_refresh_only_what_changed_text(self, tmp_path):
        clock = [NOW]
        app = snapshot_app(tmp_path)
        app.clock = lambda: clock[0]
        async with app.run_test(size=(120, 36)):
            table = app.screen.query_one("#fleet-table", LineTable)
            await until(lambda: len(table.keys) == len(app.rows))  # the first full drawing, after the first frame
            before = painted(table)
            app._tick()  # same minute: every age reads the same, nothing is drawn again
            assert painted(table) == before
            key = next(k for k in table.keys if Path(k).name == "notes")
            row = app.rows[key]
            doc = dict(row.doc or {})
            doc["active_set"] = ["ultrawork"]
            row.take(doc, NOW)
            app._row_changed(row)
            await until(lambda: "ultrawork" in on_screen(app))
            assert painted(table) == before + 1  # that row alone
            clock[0] += 120  # two minutes on: every readable row's LAST ages, the error row's "since" too
            app._tick()
            assert painted(table) == before + 1 + len(table.keys)
            assert table.row_text(key)[-1] == "6m"

    async def test_a_row_that_changes_before_the_others_were_ever_drawn_draws_them_all(self, tmp_path):
        # A fast row (a missing directory answers at once) may report before the first full drawing;
        # the rows not worked out yet are drawn too, instead of the fleet crashing on them.
        app = snapshot_app(tmp_path)
        async with app.run_test(size=(120, 36)):
            table = app.screen.query_one("#fleet-table", LineTable)
            await until(lambda: len(table.keys) == len(app.rows))
            app._cells.clear()  # as before the first full drawing
            key = next(k for k in table.keys if Path(k).name == "notes")
            app.redraw({key})
            assert set(app._cells) == set(app.rows)
            assert len(table.keys) == len(app.rows)

    async def test_a_narrower_terminal_drops_columns_at_once(self, tmp_path):
        app = snapshot_app(tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            table = app.screen.query_one("#fleet-table", LineTable)
            await until(lambda: len(table.keys) == len(app.rows))
            assert "TASKS" in table.labels and "HEALTH" in table.labels
            await pilot.resize_terminal(80, 24)
            await until(lambda: "TASKS" not in table.labels)
            assert {"STATE", "PROJECT", "NEEDS YOU"} <= set(table.labels)  # what needs you goes last


class TestSnapshots:
    def test_fleet_120x36(self, tmp_path, snap_compare):
        assert snap_compare(snapshot_app(tmp_path), terminal_size=(120, 36))

    def test_fleet_80x24(self, tmp_path, snap_compare):
        assert snap_compare(snapshot_app(tmp_path), terminal_size=(80, 24))

    def test_project_view_80x24(self, tmp_path, snap_compare):
        assert snap_compare(snapshot_app(tmp_path), terminal_size=(80, 24), press=["j", "i"])  # build-box

    def test_help_80x24(self, tmp_path, snap_compare):
        assert snap_compare(snapshot_app(tmp_path), terminal_size=(80, 30), press=["question_mark"])


class TestConfirmedPlanOnly:
    async def test_a_file_changed_after_confirming_writes_nothing_and_shows_the_new_plan(self, tmp_path):
        from rcs_tui.state.txn import PLAN_CHANGED
        from rcs_tui.ui.console.confirm import ConfirmPlan
        from rcs_tui.ui.fleet.project import ProjectScreen
        from tests.conftest import tree_digest

        root = running(tmp_path / "api")
        forge = root / ".rcs/state/forge-state.json"
        found, _ = expand_projects([str(root)])
        app = FleetApp(found, live=False)
        app.rows[found[0].key].take(SnapshotFeed(root).document(), time.time())
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            await pilot.press("i")
            await until(lambda: isinstance(app.screen, ProjectScreen))
            await pilot.pause()
            assert app.screen.current_member() == ("root", "forge")
            await pilot.press("d")
            await until(lambda: isinstance(app.screen, ConfirmPlan))
            first = app.screen
            mode(root, "forge", phase="verify", iteration=7)  # the runtime writes while the operator reads
            changed = tree_digest(root)
            await pilot.press("y")
            await until(lambda: isinstance(app.screen, ConfirmPlan) and app.screen is not first)
            await pilot.pause()
            assert tree_digest(root) == changed  # nothing was written
            assert not (root / ".rcs/logs/rcs-tui-journal.jsonl").exists()
            assert PLAN_CHANGED in str(app.screen.query_one("#plan-warning").render())
            await pilot.press("y")  # the new plan, confirmed this time
            await until(lambda: not forge.exists())


class TestReadGate:
    async def test_full_reads_wait_for_every_first_look_then_go_two_at_a_time(self):
        from rcs_tui.fleet.hub import ReadGate

        gate = ReadGate(2, waiting_for=2, patience=30)
        entered: list[int] = []

        async def read(i: int, hold: asyncio.Event) -> None:
            async with gate:
                entered.append(i)
                await hold.wait()

        hold = asyncio.Event()
        tasks = [asyncio.ensure_future(read(i, hold)) for i in range(3)]
        await asyncio.sleep(0.05)
        assert entered == []  # no row has had its first look yet
        gate.looked()
        await asyncio.sleep(0.05)
        assert entered == []
        gate.looked()
        await asyncio.sleep(0.05)
        assert entered == [0, 1]  # two at once
        hold.set()
        await asyncio.gather(*tasks)
        assert entered == [0, 1, 2]

    async def test_a_slow_first_look_holds_full_reads_only_so_long(self):
        from rcs_tui.fleet.hub import ReadGate

        gate = ReadGate(2, waiting_for=5, patience=0.1)
        async with asyncio.timeout(2):
            async with gate:
                pass


def _gone(pid: int) -> bool:
    """No such process, or only its zombie left (nothing runs any more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def test_ending_a_session_ends_what_it_started_too(tmp_path):
    """An ssh session that lingers is ended with everything in its process group (a ProxyCommand, a
    wrapper's command): nothing it started keeps running, or keeps its pipes open, after the fleet lets go."""
    from rcs_tui.fleet.remote import end_session

    pidfile = tmp_path / "child.pid"
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", f"sleep 60 & echo $! > {pidfile}; sleep 60", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.02)
    child = int(pidfile.read_text())
    await end_session(proc)
    assert proc.returncode is not None
    for _ in range(50):
        if _gone(child):
            break
        await asyncio.sleep(0.02)
    assert _gone(child)
    assert await asyncio.wait_for(proc.stdout.read(), 2) == b""  # the pipe reached its end: nobody holds it


def _pipes() -> set[str]:
    """The pipes this process holds open (as /proc names them, `pipe:[inode]`)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("pipe:"):
            out.add(link)
    return out


async def test_quitting_while_a_session_is_ending_still_ends_it(tmp_path):
    """Quitting the fleet (or `fleet --once` finishing) just as a session is being ended, in the grace time
    it gets to exit on its own after its stdin is closed, still kills and reaps it: no ssh left running
    after the fleet is gone, and none of its pipes left open here."""
    from rcs_tui.fleet.hub import FleetHub
    from rcs_tui.fleet.transport import Ssh

    pidfile, closed = tmp_path / "ssh.pid", tmp_path / "stdin-closed"
    fake_ssh = tmp_path / "ssh"
    fake_ssh.write_text("#!/bin/sh\n"
                        f"echo $$ > {pidfile}\n"
                        "echo '<html>not a snapshot</html>'\n"  # the fleet gives up on this session...
                        "cat > /dev/null\n"  # ...closes its stdin...
                        f": > {closed}\n"
                        "exec sleep 60\n")  # ...and it lingers, as a session whose host ignores the hang-up
    fake_ssh.chmod(0o755)
    before = _pipes()
    hub = FleetHub([parse_project(f"ssh://somehost{tmp_path}")], ssh=Ssh(binary=str(fake_ssh)), max_backoff=60)
    hub.start()
    await until(closed.exists)
    await hub.stop()  # while the session is still in its grace time
    pid = int(pidfile.read_text())
    assert not os.path.exists(f"/proc/{pid}"), "the session's ssh still runs (or was never reaped)"
    assert _pipes() <= before


async def test_stop_ends_a_session_task_that_dropped_its_first_cancellation():
    """On Python 3.11 `asyncio.wait_for` can drop a cancellation that lands just as its line arrives (a
    heartbeat every fraction of a second makes that likely): such a session read on forever and quitting
    the fleet hung. `stop` cancels again until the task has ended."""
    from rcs_tui.fleet.hub import FleetHub

    dropped = []

    async def session() -> None:
        while True:
            try:
                await asyncio.sleep(0.05)  # reading heartbeat lines
            except asyncio.CancelledError:
                if dropped:
                    raise
                dropped.append(True)  # the first cancellation lost, as wait_for loses it

    hub = FleetHub([])
    task = asyncio.ensure_future(session())
    hub.tasks.append(task)
    await asyncio.sleep(0.1)
    stopping = asyncio.ensure_future(hub.stop())
    await asyncio.wait({stopping}, timeout=5)  # not wait_for: cancelling `stop` would cancel the task too
    ended = stopping.done() and task.done()
    task.cancel()
    await asyncio.wait({stopping}, timeout=5)
    assert dropped and ended and not hub.tasks
