"""The order n / N walk the rows that need you: views in tab order, each top to bottom as its table shows it
(a row its table does not show comes after the shown ones), acknowledged rows passed by, wrapping both ways."""

from __future__ import annotations

from rcs_tui.core.attention import Verdict
from rcs_tui.ui.console.main import TABS
from rcs_tui.ui.console.needs import Needs
from rcs_tui.ui.console.scopes import row_item
from rcs_tui.ui.console.walk import next_stop, stops

STALE = Verdict("stale", "s1/blueprint", "blueprint is stale", "inferred", 10.0)
DEAD = Verdict("dead", "crew/w2", "worker w2 of team crew: heartbeat says alive: false", "reported", 20.0)
SILENT = Verdict("silent", "crew/w1", "worker w1 of team crew: no heartbeat", "inferred", 30.0)
WAITING = Verdict("waiting", "rp1/r9", "rp1 run r9 waits for your answer", "reported", 40.0)
FAILED = Verdict("failed", "rp1/r1", "rp1 run r1 failed", "reported", 50.0)
SCOPES = ["scope:s1", "member:s1:s1:forge", "member:s1:s1:blueprint"]


def walk(needs: Needs, worker_keys=("crew/w1", "crew/w2"), run_keys=("r1", "r5", "r9")):
    return stops(needs, TABS, TABS, SCOPES, row_item, ["crew/w1", "crew/w2"], list(worker_keys), list(run_keys))


def test_views_in_tab_order_rows_in_table_order():
    found = walk(Needs((STALE, DEAD, SILENT, WAITING, FAILED)))
    assert [(s.view, s.key) for s in found] == [("scopes", "member:s1:s1:blueprint"), ("team", "crew/w1"),
                                              ("team", "crew/w2"), ("rp1", "r1"), ("rp1", "r9")]
    assert [s.item for s in found][-2:] == ["rp1/r1", "rp1/r9"]


def test_rows_their_table_does_not_show_come_after_the_shown_ones():
    # the filter shows w2 only; the feed on screen has not been read yet
    found = walk(Needs((DEAD, SILENT, WAITING, FAILED)), worker_keys=("crew/w2",), run_keys=())
    assert [s.key for s in found] == ["crew/w2", "crew/w1", "r9", "r1"]  # runs in the verdicts' order


def test_acknowledged_rows_are_passed_by_and_the_walk_wraps():
    needs = Needs((STALE, DEAD, WAITING))
    needs.acknowledge("crew/w2")
    found = walk(needs)
    assert [s.key for s in found] == ["member:s1:s1:blueprint", "r9"]
    tasks = (TABS.index("tasks"), -1)
    assert next_stop(found, tasks, 1).key == "r9"
    assert next_stop(found, tasks, -1).key == "member:s1:s1:blueprint"
    last = found[-1].place
    assert next_stop(found, last, 1).key == "member:s1:s1:blueprint"  # round again
    assert next_stop(found, found[0].place, -1).key == "r9"
    assert next_stop([], tasks, 1) is None
