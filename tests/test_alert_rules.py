"""The alert rules, each on an injected clock: hold time, baseline and start-up grace, cooldown per member,
de-duplication, quiet hours, the project in front of you, acknowledgement, the per-project rate limit,
and rules that differ by channel."""

from __future__ import annotations

import pytest

from rcs_tui.core.alert_rules import AlertRules, ChannelRules, in_quiet_hours, parse_quiet_hours

ALL = frozenset({"waiting", "failed", "dead", "stale"})
T0 = 1_900_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def rules(clock, grace=0.0, minute=lambda ts: 12 * 60, **channels):
    return AlertRules(channels or {"push": ChannelRules(ALL)}, grace=grace, clock=clock, minute_of=minute)


def fired(decisions):
    return [(d.channel, d.kind, d.item, d.held) for d in decisions]


def start(r, project="api"):
    r.observe(project, {})  # the first look is the baseline


def test_waiting_must_last_its_hold_time_before_it_alerts():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, hold={"waiting": 5.0}))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "a", ("failed", "s1/team"): "b"})
    assert fired(r.due()) == [("push", "failed", "s1/team", None)]  # no hold for failed
    clock.now += 4.9
    assert r.due() == []
    clock.now += 0.1
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]
    assert r.due() == []  # decided once


def test_a_wait_that_ends_within_its_hold_never_alerts():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, hold={"waiting": 5.0}))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "a"})
    clock.now += 3
    r.observe("api", {})
    clock.now += 10
    assert r.due() == []


def test_the_first_look_and_the_start_up_grace_are_the_baseline():
    clock = Clock()
    r = rules(clock, grace=10.0)
    r.observe("api", {("waiting", "s1/forge"): "a"})  # already there: on screen, not news
    clock.now += 5
    r.observe("api", {("waiting", "s1/forge"): "a", ("dead", "crew/w1"): "x"})  # new, but within the grace
    clock.now += 6
    r.observe("api", {("waiting", "s1/forge"): "a", ("dead", "crew/w1"): "x", ("failed", "s2/forge"): "y"})
    assert fired(r.due()) == [("push", "failed", "s2/forge", None)]


def test_a_member_alerts_again_only_after_its_cooldown():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, cooldown=60.0))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "a"})
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]
    clock.now += 30
    r.observe("api", {("failed", "s1/forge"): "b"})  # the same member, another kind, within the cooldown
    assert fired(r.due()) == [("push", "failed", "s1/forge", "cooldown")]
    r.observe("api", {("failed", "s1/forge"): "b", ("failed", "s2/forge"): "c"})  # another member: its own
    assert fired(r.due()) == [("push", "failed", "s2/forge", None)]
    clock.now += 31
    r.observe("api", {})
    r.observe("api", {("waiting", "s1/forge"): "d"})
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]


def test_the_same_entry_in_the_same_state_is_sent_once_within_the_dedupe_window():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, dedupe=600.0))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "asked at 10:00"})
    assert fired(r.due())[0][3] is None
    clock.now += 5
    r.observe("api", {})  # flaps away and back, saying the same
    clock.now += 5
    r.observe("api", {("waiting", "s1/forge"): "asked at 10:00"})
    assert fired(r.due()) == [("push", "waiting", "s1/forge", "duplicate")]
    r.observe("api", {("waiting", "s1/forge"): "asked at 10:01"})  # a new question is news
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]
    clock.now += 601
    r.observe("api", {})
    r.observe("api", {("waiting", "s1/forge"): "asked at 10:00"})
    assert fired(r.due())[0][3] is None


@pytest.mark.parametrize(("spec", "minute", "quiet"), [
    ("22:00-07:00", 23 * 60, True), ("22:00-07:00", 3 * 60, True), ("22:00-07:00", 7 * 60, False),
    ("22:00-07:00", 12 * 60, False), ("12:30-13:00", 12 * 60 + 30, True), ("12:30-13:00", 13 * 60, False),
    ("08:00-08:00", 8 * 60, False),
])
def test_quiet_hours_run_past_midnight(spec, minute, quiet):
    assert in_quiet_hours(parse_quiet_hours(spec), minute) is quiet


@pytest.mark.parametrize("bad", ["22-07", "24:00-07:00", "22:00", "22:60-07:00", "ab:cd-07:00", "7:5-8:00"])
def test_quiet_hours_that_are_not_hh_mm_are_refused(bad):
    with pytest.raises(ValueError, match="HH:MM-HH:MM"):
        parse_quiet_hours(bad)


def test_quiet_hours_hold_an_alert_back_by_local_time():
    clock = Clock()
    minute = [23 * 60]
    r = rules(clock, minute=lambda ts: minute[0], push=ChannelRules(ALL, quiet_hours=(22 * 60, 7 * 60)),
              bell=ChannelRules(ALL))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "a"})
    assert sorted(fired(r.due())) == [("bell", "waiting", "s1/forge", None),
                                      ("push", "waiting", "s1/forge", "quiet hours")]
    minute[0] = 8 * 60
    r.observe("api", {("waiting", "s1/forge"): "a", ("failed", "s2/forge"): "b"})
    assert sorted(fired(r.due())) == [("bell", "failed", "s2/forge", None), ("push", "failed", "s2/forge", None)]


def test_no_alert_for_the_project_in_front_of_you():
    clock = Clock()
    r = rules(clock)
    start(r, "api")
    start(r, "web")
    r.observe("api", {("waiting", "s1/forge"): "a"})
    r.observe("web", {("waiting", "s1/forge"): "a"})
    assert sorted((d.project, d.held) for d in r.due(focused={"api"})) == [("api", "looking at it"), ("web", None)]


def test_an_acknowledged_entry_is_quiet_until_its_state_changes():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, hold={"waiting": 5.0}))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "question 1"})
    assert r.acknowledge("api", ("waiting", "s1/forge")) is True
    assert r.acknowledge("api", ("waiting", "nobody")) is False
    clock.now += 5
    assert fired(r.due()) == [("push", "waiting", "s1/forge", "acknowledged")]
    r.observe("api", {("waiting", "s1/forge"): "question 2"})
    clock.now += 5
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]


def test_one_message_per_project_per_min_interval_on_a_channel():
    clock = Clock()
    r = rules(clock, push=ChannelRules(ALL, min_interval=30.0))
    start(r)
    r.observe("api", {("waiting", "a"): "1", ("waiting", "b"): "1"})
    assert [d.held for d in r.due()] == [None, None]  # decided together: one message
    clock.now += 10
    r.observe("api", {("waiting", "a"): "1", ("waiting", "b"): "1", ("waiting", "c"): "1"})
    assert fired(r.due()) == [("push", "waiting", "c", "rate limit")]
    clock.now += 30
    r.observe("api", {("waiting", "a"): "1", ("waiting", "b"): "1", ("waiting", "c"): "1", ("dead", "d"): "1"})
    assert fired(r.due()) == [("push", "dead", "d", None)]


def test_each_channel_has_its_own_kinds_and_holds():
    clock = Clock()
    r = rules(clock, bell=ChannelRules(ALL), push=ChannelRules(frozenset({"waiting"}), hold={"waiting": 60.0}))
    start(r)
    r.observe("api", {("waiting", "s1/forge"): "a", ("dead", "crew/w1"): "b"})
    assert sorted(fired(r.due())) == [("bell", "dead", "crew/w1", None), ("bell", "waiting", "s1/forge", None)]
    clock.now += 60
    assert fired(r.due()) == [("push", "waiting", "s1/forge", None)]
