"""The ssh transport without a server: no name from the config reaches ssh as an option, and a host's
failures read as one short reason, like a local row's."""

from __future__ import annotations

import asyncio

import pytest

from rcs_tui.fleet.actions import ActionError, CliActions
from rcs_tui.fleet.hub import FleetHub
from rcs_tui.fleet.projects import Project, ProjectSpecError, parse_project
from rcs_tui.fleet.transport import Ssh, failure_reason


def test_a_host_refusing_the_root_reads_like_a_local_one():
    """The host's own refusal of a root without .rcs/ (its error line) reads as a local row's reason."""
    project = parse_project("ssh://devbox/srv/bare")
    err = ('{"error": "--root /srv/bare: no .rcs/ directory there (a project root is a directory holding '
           '.rcs/; ...)"}\n')
    assert failure_reason(1, err, project) == "no .rcs/ in /srv/bare"
    assert failure_reason(1, '{"error": "--root /srv/bare: not a directory"}', project) == \
        "no such directory: /srv/bare"
    assert failure_reason(1, '{"error": "something else"}', project) == "something else"


@pytest.mark.parametrize("spec", ["ssh://-oProxyCommand/srv/x", "ssh://-x@devbox/srv/x", "ssh://u@-Efoo:22/srv/x"])
def test_a_host_or_user_starting_with_a_dash_is_refused(spec):
    with pytest.raises(ProjectSpecError, match="may not start with '-'"):
        parse_project(spec)


@pytest.mark.parametrize("project", [Project("x", "/srv/x", host="-E.log"),
                                     Project("x", "/srv/x", host="devbox", user="-oProxyCommand")])
def test_ssh_refuses_to_build_argv_for_a_dashed_name_made_some_other_way(project):
    with pytest.raises(ProjectSpecError, match="ssh would read a name starting with '-' as an option"):
        Ssh().argv(project, ["snapshot"])


async def test_a_dashed_host_is_the_rows_reason_and_ssh_never_starts(tmp_path):
    marker = tmp_path / "ran"
    fake_ssh = tmp_path / "ssh"
    fake_ssh.write_text(f"#!/bin/sh\n: > {marker}\n")
    fake_ssh.chmod(0o755)
    project = Project("x", "/srv/x", host="-E.log")
    hub = FleetHub([project], ssh=Ssh(binary=str(fake_ssh)), once=True)
    hub.start()
    await asyncio.wait(hub.tasks, timeout=5)
    await hub.stop()
    assert "refusing host '-E.log'" in hub.rows[project.key].error
    with pytest.raises(ActionError, match="refusing host '-E.log'"):
        CliActions(project, Ssh(binary=str(fake_ssh))).journal()
    assert not marker.exists()


def test_the_fleet_command_refuses_a_dashed_host_before_running_anything(run_cli, tmp_path):
    res = run_cli("fleet", "--once", "--project", f"ssh://-oProxyCommand{tmp_path}", timeout=30)
    assert res.code != 0
    assert "may not start with '-'" in res.stderr and "ssh://-oProxyCommand" in res.stderr


async def test_a_host_sending_a_huge_cheap_line_costs_its_row_not_the_fleet(tmp_path):
    """One 33 MB line of `[],[],…` from a host once cost the fleet 1.7 GB and 28 s for that row. The values a
    document holds are counted before it is parsed: such a row says why, and the other rows go on."""
    import resource

    from rcs_tui.fleet import remote

    fake_ssh = tmp_path / "ssh"
    fake_ssh.write_text("#!/bin/sh\npython3 -c \"import sys; sys.stdout.write('[' + '[],' * 11000000 + '[]]\\\\n')\"\n"
                        "cat > /dev/null\n")
    fake_ssh.chmod(0o755)
    project = parse_project(f"ssh://devbox{tmp_path}")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hub = FleetHub([project], ssh=Ssh(binary=str(fake_ssh)), once=True)
    hub.start()
    await asyncio.wait(hub.tasks, timeout=60)
    await hub.stop()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert hub.rows[project.key].error == f"sent a document of more than {remote.MAX_VALUES:,} values; not read"
    assert grown_mb < 400, grown_mb  # the line itself is read (bounded by its length), never parsed
