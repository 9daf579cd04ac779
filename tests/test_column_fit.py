"""The one column fit rule every table uses: content shows whole when there is room, nothing is cut while
another column has cells to spare, columns give way in their declared order, and the table never needs
more than the width."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rcs_tui.ui.column_fit import PADDING, SCROLLBAR, Column, fit, wanted

NAME = Column("name", 12, keep=99, grow=28, cut=98)
WHY = Column("why", 12, keep=97, grow=40, cut=96)
NOTE = Column("note", 16, keep=50, grow=60)
HOST = Column("host", 9, keep=5, grow=8)
AGE = Column("age", 5, keep=60)
COLUMNS = (NAME, HOST, WHY, NOTE, AGE)


def laid_out(columns, content, width, mark=0):
    index, widths = fit(columns, content, width, mark)
    return {columns[i].label: w for i, w in zip(index, widths, strict=True)}


def used(widths) -> int:
    return sum(w + PADDING for w in widths.values()) + SCROLLBAR


def test_every_column_gets_its_content_when_there_is_room():
    content = [26, 5, 34, 9, 2]
    shown = laid_out(COLUMNS, content, 200)
    assert shown == {"name": 26, "host": 5, "why": 34, "note": 9, "age": 3}  # age: its label, 3 cells


def test_a_narrow_column_cut_to_its_label_frees_the_cells_it_does_not_need():
    shown = laid_out(COLUMNS, [4, 5, 3, 4, 2], 80)
    assert shown == {"name": 4, "host": 5, "why": 3, "note": 4, "age": 3}


def test_the_least_important_column_goes_first_and_the_name_and_reason_stay_whole():
    content = [26, 5, 34, 9, 2]
    at_80 = laid_out(COLUMNS, content, 80)
    assert "host" not in at_80  # keep 5: the first to go
    assert at_80["name"] == 26 and at_80["why"] == 34
    at_60 = laid_out(COLUMNS, content, 60)
    assert list(at_60) == ["name", "why"]
    assert at_60["name"] == 26  # the name is cut last: the reason gave way first
    assert used(at_60) <= 60


def test_a_long_note_is_cut_before_any_column_is_dropped_and_gets_back_what_is_left():
    content = [10, 5, 10, 90, 2]
    shown = laid_out(COLUMNS, content, 80)
    assert set(shown) == {"name", "host", "why", "note", "age"}
    assert shown["note"] < 76 and used(shown) == 80  # cut, but every spare cell went to it


def test_content_wider_than_a_column_may_grow_shows_whole_once_every_column_has_what_it_wants():
    content = [10, 5, 10, 120, 2]
    assert laid_out(COLUMNS, content, 200)["note"] == 120
    assert laid_out(COLUMNS, content, 120)["note"] < 120


def test_a_whole_column_shows_whole_or_at_its_width_never_between():
    run = Column("run", 9, keep=10, grow=40, whole=True)
    status = Column("status", 12, keep=9)
    name = Column("name", 14, keep=7, grow=30)
    columns = (run, status, name)
    content = [36, 12, 40]
    assert laid_out(columns, content, 120) == {"run": 36, "status": 12, "name": 40}
    narrow = laid_out(columns, content, 60)
    assert narrow["run"] == 9  # a typable prefix, not 25 of 36 characters
    assert narrow["name"] == 60 - SCROLLBAR - 3 * PADDING - 9 - 12  # the cells it did not take went on


def test_no_rows_yet_gives_each_column_as_much_as_it_may_grow():
    assert laid_out((NAME, AGE), None, 200) == {"name": 40, "age": 5}


def test_the_sort_mark_has_room_beside_every_label():
    assert wanted(AGE, 2, mark=2) == len("age") + 2
    assert laid_out((NAME, AGE), [26, 2], 200, mark=2)["age"] == 5


def test_one_column_left_takes_the_width_there_is():
    assert laid_out((NAME,), [60], 30) == {"name": 30 - SCROLLBAR - PADDING}


columns_st = st.lists(st.builds(Column, label=st.text("abcdef", min_size=1, max_size=8),
                                width=st.integers(1, 20), keep=st.integers(0, 100), grow=st.integers(0, 60),
                                cut=st.integers(0, 100), whole=st.booleans()),
                      min_size=1, max_size=9)


@given(columns=columns_st, data=st.data(), width=st.integers(20, 240))
def test_the_fit_rule_holds_for_any_columns_and_width(columns, data, width):
    columns = tuple(columns)
    content = data.draw(st.lists(st.integers(0, 150), min_size=len(columns), max_size=len(columns)))
    index, widths = fit(columns, content, width)
    shown = dict(zip(index, widths, strict=True))
    assert index == sorted(index) and index
    # The total never exceeds the width (a single column left is cut to it).
    assert sum(w + PADDING for w in widths) + SCROLLBAR <= width or len(index) == 1
    # No column is wider than its content or label asks for.
    full = [max(len(c.label), content[i]) for i, c in enumerate(columns)]
    assert all(shown[i] <= max(full[i], 1) for i in index)
    # No column is cut while another has cells to spare: when one shows less than it wants, the width
    # is used up (short of a whole column waiting for room to show whole).
    want = [wanted(c, content[i]) for i, c in enumerate(columns)]
    cut = [i for i in index if shown[i] < want[i] and not columns[i].whole]
    if cut:
        assert sum(w + PADDING for w in widths) + SCROLLBAR == width or len(index) == 1
    # Priorities: a dropped column is never more important than one that shows.
    dropped = [i for i in range(len(columns)) if i not in shown]
    if dropped:
        assert max(columns[i].keep for i in dropped) <= min(columns[i].keep for i in index)
