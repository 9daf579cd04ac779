"""The ssh transport without a server: a host's failures read as one short reason, like a local row's."""

from __future__ import annotations

from rcs_tui.fleet.projects import parse_project
from rcs_tui.fleet.transport import failure_reason


def test_a_host_refusing_the_root_reads_like_a_local_one():
    """The host's own refusal of a root without .rcs/ (its error line) reads as a local row's reason."""
    project = parse_project("ssh://devbox/srv/bare")
    err = ('{"error": "--root /srv/bare: no .rcs/ directory there (a project root is a directory holding '
           '.rcs/; ...)"}\n')
    assert failure_reason(1, err, project) == "no .rcs/ in /srv/bare"
    assert failure_reason(1, '{"error": "--root /srv/bare: not a directory"}', project) == \
        "no such directory: /srv/bare"
    assert failure_reason(1, '{"error": "something else"}', project) == "something else"
