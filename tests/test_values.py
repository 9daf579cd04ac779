"""Which numbers in a state file are usable counts and measures (anything else shows as unknown)."""

from rcs_tui.core.values import MAX_EXACT, count, number


def test_a_count_is_a_whole_number_in_range():
    assert [count(v) for v in (0, 7, MAX_EXACT)] == [0, 7, MAX_EXACT]
    assert [count(v) for v in (-1, MAX_EXACT + 1, 10**320, True, False, 1.0, "3", None)] == [None] * 8


def test_a_measure_is_a_finite_number_in_range():
    assert [number(v) for v in (0, -5, 2.5, MAX_EXACT, -MAX_EXACT)] == [0.0, -5.0, 2.5, float(MAX_EXACT),
                                                                        -float(MAX_EXACT)]
    assert [number(v) for v in (MAX_EXACT + 1, -MAX_EXACT - 1, 10**320, float("nan"), float("inf"), True,
                                "1", None)] == [None] * 8


def test_an_error_carries_its_kind_else_the_default():
    from rcs_tui.core.error_kinds import ERROR, LOCK_BUSY, NOT_FOUND, kind_of

    class Busy(Exception):
        error_kind = LOCK_BUSY

    class Odd(Exception):
        error_kind = 7

    assert kind_of(Busy()) == LOCK_BUSY
    assert kind_of(ValueError()) == ERROR
    assert kind_of(Odd()) == ERROR  # a kind must be text
    assert kind_of(ValueError(), NOT_FOUND) == NOT_FOUND
