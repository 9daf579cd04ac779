"""The time-bars drawing: what a person sees of a chart at a width (folds, marks, glyphs, fitting)."""

from __future__ import annotations

import math

import pytest

from rcs_tui.core.spans import Chart, Clamp, Lane, Span, moment
from rcs_tui.views.timeline_bars import Bars, render

T0 = moment("2026-11-25T17:50:00Z")
H = 3600.0


pytestmark = pytest.mark.usefixtures("utc")


def night() -> Chart:
    """Ten minutes of work, three quiet hours, ten minutes of work (the second step still running)."""
    return Chart((Lane("plan", (Span(T0, T0 + 600, "done"),), status="completed"),
                  Lane("build", (Span(T0 + 600 + 3 * H, None, "running"),), current=True, status="running"),
                  Lane("T1", (Span(T0 + 700 + 3 * H, T0 + 900 + 3 * H, "failed"),), depth=1, status="failed")))


def plain(chart: Chart, width: int, now: float | None = None) -> list[str]:
    return [line.plain for line in render(chart, width, now=now)]


def row(lines: list[str], label: str) -> str:
    return next(line for line in lines if line.lstrip("▶ ").startswith(label))


def bar(lines: list[str], label: str, width: int) -> str:
    label_w = len(lines[0]) - len(lines[0].lstrip(" "))
    return row(lines, label)[label_w:].ljust(width - label_w)


class TestFolds:
    def test_an_idle_night_is_one_marked_column_and_both_stretches_of_work_show(self):
        lines = plain(night(), 80, now=T0 + 1200 + 3 * H)
        assert "≈3h00m" in lines[0]
        plan, build = bar(lines, "plan", 80), bar(lines, "build", 80)
        fold = plan.index("┊")
        assert build.index("┊") == fold and lines[1].index("┊") == lines[1].index("┊")
        # Drawn to scale, ten minutes of a 3h20m chart would be 3 % of the bar; folded, about half.
        assert plan.count("█") >= len(plan) // 3
        assert build.count("▓") >= len(build) // 3
        assert "3h00m folded" in lines[-1]

    def test_a_quiet_stretch_shorter_than_ten_minutes_is_drawn_to_scale(self):
        chart = Chart((Lane("a", (Span(T0, T0 + 300, "done"), Span(T0 + 780, T0 + 900, "done"))),))
        lines = plain(chart, 80)
        assert "≈" not in lines[0] and "┊" not in "".join(lines)

    def test_work_open_across_an_hour_is_not_folded_but_across_a_night_it_is(self):
        hour = Chart((Lane("a", (Span(T0, T0 + H, "done"),)), Lane("b", (Span(T0 + 60, T0 + 120, "done"),))))
        assert "┊" not in "".join(plain(hour, 80))
        nightly = Chart((Lane("a", (Span(T0, T0 + 10 * H, "done"),)),
                         Lane("b", (Span(T0 + 60, T0 + 120, "done"), Span(T0 + 10 * H - 60, T0 + 10 * H, "done")))))
        lines = plain(nightly, 80)
        assert "≈9h57m" in lines[0]  # 10 h less the three minutes of work
        assert bar(lines, "a", 80).strip().replace("█", "") == "┊"  # the step spans the fold

    def test_a_wait_across_hours_is_folded_like_idle_time(self):
        chart = Chart((Lane("ask", (Span(T0, T0 + 300, "done"), Span(T0 + 300, T0 + 3 * H, "waiting"),
                                    Span(T0 + 3 * H, T0 + 3 * H + 300, "done"))),))
        lines = plain(chart, 80)
        assert "≈2h55m" in lines[0]
        assert "░┊█" in bar(lines, "ask", 80) or "░┊░" in bar(lines, "ask", 80)


class TestMarks:
    def test_the_current_step_is_marked_and_bold(self):
        lines = render(night(), 80, now=T0 + 1200 + 3 * H)
        build = next(line for line in lines if "build" in line.plain)
        assert build.plain.startswith("▶ build")
        assert any("bold" in str(s.style) and build.plain[s.start:s.end] == "build" for s in build.spans)
        assert row([line.plain for line in lines], "plan").startswith("  plan")

    def test_units_are_indented_under_their_step(self):
        lines = plain(night(), 80, now=T0 + 1200 + 3 * H)
        assert lines.index(row(lines, "T1")) == lines.index(row(lines, "build")) + 1
        assert row(lines, "T1").startswith("    T1")

    def test_each_kind_has_its_own_glyph_and_the_legend_names_the_drawn_kinds(self):
        lines = plain(night(), 100, now=T0 + 1200 + 3 * H)
        assert "█" in bar(lines, "plan", 100) and "▓" in bar(lines, "build", 100) and "×" in bar(lines, "T1", 100)
        assert lines[-1].startswith("█ done  ▓ running  × failed")
        assert "waiting" not in lines[-1] and lines[-1].endswith("▶ now")

    def test_the_axis_labels_are_clock_times_of_the_chart(self):
        lines = plain(night(), 120, now=T0 + 1200 + 3 * H)
        assert lines[0].split()[0] == "17:50" and "≈3h00m┊21:00" in lines[0]
        assert "┬" in lines[1]

    def test_ticks_a_minute_or_more_apart_show_no_seconds(self):
        labels = plain(Chart((Lane("a", (Span(T0, T0 + 240, "done"),)),)), 80)[0].split()
        assert labels[0] == "17:50" and all(len(label) == 5 for label in labels)

    def test_a_run_of_a_few_seconds_still_running_reaches_the_right_edge(self):
        chart = Chart((Lane("a", (Span(T0, T0 + 4, "done"),)),
                       Lane("b", (Span(T0 + 4, None, "running"),), current=True)))
        b = bar(plain(chart, 80, now=T0 + 12), "b", 80)
        assert b.endswith("▓") and b.count("▓") >= len(b) // 2

    def test_a_retried_step_shows_each_attempt(self):
        chart = Chart((Lane("verify", (Span(T0, T0 + 600, "failed"), Span(T0 + 900, T0 + 1500, "done"))),))
        b = bar(plain(chart, 80), "verify", 80).strip()
        assert b.startswith("×") and b.endswith("█") and " " in b


class TestFit:
    CHARTS = {
        "night": night(),
        "long labels": Chart(tuple(Lane("step-" + "x" * 90 + str(i), (Span(T0 + i, T0 + i * 60, "done"),), i % 3)
                                   for i in range(12))),
        "wide chars": Chart((Lane("設計フェーズ設計フェーズ", (Span(T0, None, "running"),), current=True),)),
        "hostile": Chart((Lane("\x1b[31mred\x1b]52;c;x\x07", (Span(math.nan, T0, "done"), Span(T0, T0 - 50, "waiting"),
                                                               Span(math.inf, None, "done"), Span(T0, 1e300, "??"))),
                          Lane("neg", (Span(-5e9, -1.0, "failed"),), depth=-3))),
        "many folds": Chart((Lane("a", tuple(Span(T0 + i * 5 * H, T0 + i * 5 * H + 60, "done") for i in range(60))),)),
        "empty": Chart(),
        "no spans": Chart((Lane("a"), Lane("b", current=True))),
    }

    @pytest.mark.parametrize("name", list(CHARTS))
    def test_no_line_is_ever_wider_than_the_width(self, name):
        for width in range(1, 201):
            for line in render(self.CHARTS[name], width, now=T0 + 9 * H):
                assert line.cell_len <= width, (name, width, line.plain)

    def test_a_line_of_a_hostile_label_carries_no_escape(self):
        text = "".join(plain(self.CHARTS["hostile"], 80))
        assert "\x1b" not in text and "\x07" not in text and "red" in text

    def test_long_names_shrink_then_end_with_an_ellipsis_and_the_bars_keep_two_thirds(self):
        lines = plain(self.CHARTS["long labels"], 90)
        label_w = len(lines[0]) - len(lines[0].lstrip(" "))
        assert label_w <= 90 // 3 + 1
        assert row(lines, "step-")[:label_w].rstrip().endswith("…")
        assert len(bar(lines, "step-", 90)) >= 90 * 2 // 3 - 1

    def test_at_very_small_widths_the_steps_are_listed_with_their_status(self):
        lines = plain(night(), 20, now=T0 + 1200 + 3 * H)
        assert lines[:3] == ["  plan completed", "▶ build running", "    T1 failed"]
        assert not any("┊" in line or "█" in line for line in lines)

    def test_the_renderable_draws_at_the_width_it_is_given(self):
        from rich.console import Console

        for width in (60, 80, 120, 200):
            console = Console(width=width, record=True, color_system=None)
            console.print(Bars(night(), now=T0 + 1200 + 3 * H))
            out = console.export_text().splitlines()
            assert max(len(line) for line in out) <= width and "≈3h00m" in out[0]


class TestBadTimes:
    def test_one_instant_still_draws_a_mark(self):
        lines = plain(Chart((Lane("only", (Span(T0, T0, "done"),)),)), 60)
        assert bar(lines, "only", 60).strip() == "█"

    def test_a_span_ending_before_it_starts_is_an_instant_and_a_span_without_a_start_is_dropped(self):
        chart = Chart((Lane("a", (Span(T0, T0 + 600, "done"),)), Lane("b", (Span(T0 + 300, T0 - 9e6, "failed"),)),
                       Lane("c", (Span(math.nan, T0 + 300, "done"),))))
        lines = plain(chart, 80)
        assert bar(lines, "b", 80).strip() == "×" and bar(lines, "c", 80).strip() == ""
        assert "≈" not in lines[0]  # the backwards end made no months-long chart

    def test_a_clock_behind_the_data_never_cuts_an_open_span_short(self):
        chart = Chart((Lane("a", (Span(T0, T0 + 600, "done"),)), Lane("b", (Span(T0 + 300, None, "running"),))))
        b = bar(plain(chart, 80, now=T0 - 5 * H), "b", 80)
        assert b.rstrip().endswith("▓") and len(b.rstrip()) == len(bar(plain(chart, 80), "a", 80).rstrip())

    @pytest.mark.parametrize("stamp", ["", "yesterday", "1970-01-01T00:00:00Z", "9999-12-31T00:00:00Z", None, 17,
                                       "2026-13-40T00:00:00Z", "2026-11-25T21:00:00Z" + "0" * 100])
    def test_unusable_stamps_are_no_moment(self, stamp):
        assert moment(stamp) is None

    def test_a_stamp_without_a_zone_is_utc_and_an_offset_is_honoured(self):
        assert moment("2026-11-25T17:50:00") == T0 == moment("2026-11-25T18:50:00+01:00")

    def test_stamps_read_in_write_order_never_go_back(self):
        clamp = Clamp()
        got = [clamp(s) for s in ("2026-11-25T17:50:00Z", "2026-11-25T17:49:59.999Z", "garbage",
                                  "2026-11-25T18:00:00Z")]
        assert got == [T0, T0, T0, T0 + 600]
