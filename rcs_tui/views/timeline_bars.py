"""A chart of lanes drawn as bars on a time axis, fitted to a width: the run timeline and the task
transcript as pictures.

One row per lane: its label (indented under its step for a unit, `▶` and bold for where the run is now,
cut with `…` when long) then its spans as bars, one glyph per kind (`█` done, `▓` running, `░` waiting,
`×` failed) so the kinds read without colour. Above them the axis: clock times (local) at round
intervals. A quiet stretch (no span starting or ending) longer than a tenth of what is left to draw to
scale, and than `MIN_IDLE` (`BUSY_IDLE` when some work is open across it: a step left running overnight),
is folded into one `┊` column labelled with its length, so a run that sat idle overnight still shows
its work; the longest first, at most one fold per `FOLD_EVERY` columns. Under `MIN_BARS` columns for
the bars, the lanes are listed as text instead. Pure: a `Chart` and a width in, Rich `Text` lines out,
none wider than the width; labels go through the one sanitiser.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from rcs_tui.core.spans import DONE, FAILED, KINDS, RUNNING, WAITING, Chart, Lane, Span
from rcs_tui.views.line_fit import ago
from rcs_tui.views.text import strip_controls

GLYPH = {DONE: "█", RUNNING: "▓", WAITING: "░", FAILED: "×"}
STYLE = {DONE: "green", RUNNING: "bold cyan", WAITING: "bold yellow", FAILED: "bold red"}
FOLD = "┊"
CURRENT = "▶ "
MIN_IDLE = 10 * 60.0  # a quiet stretch shorter than this is drawn to scale
BUSY_IDLE = 2 * 3600.0  # ... or shorter than this while some work is open across it
FOLD_SHARE = 0.1  # ... and so is one shorter than this share of the time still drawn to scale
FOLD_EVERY = 8  # at most one fold per this many bar columns
MIN_BARS = 16  # fewer bar columns than this: a list instead
MIN_SPAN = 1.0  # a chart shorter than this (one instant, say) is drawn over this many seconds
NICE = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
        172800, 604800)
MAX_LANES = 200  # rows drawn; the rest are counted on one line
LAST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z: later than this is no time (nor is NaN)
LABEL_GAP = 2  # columns left free between two axis labels

Local = Callable[[float], time.struct_time]


@dataclass(frozen=True)
class _Axis:
    """Where time goes on the bar columns: stretches of time drawn to scale, folds between them."""

    starts: tuple[float, ...]  # each stretch: first time,
    ends: tuple[float, ...]  # last time,
    cols: tuple[int, ...]  # first column,
    widths: tuple[int, ...]  # and number of columns; a fold is the column after a stretch
    width: int

    def col(self, t: float, *, end: bool = False) -> int:
        """The column drawing `t` (with `end`, the last column a span ending at `t` fills)."""
        i = bisect.bisect_right(self.starts, t) - 1
        if i < 0:
            return 0
        a, b, c0, n = self.starts[i], self.ends[i], self.cols[i], self.widths[i]
        if t > b:  # inside the fold after stretch i
            return min(self.width - 1, c0 + n)
        if b <= a:
            return c0
        x = (t - a) / (b - a) * n
        k = math.ceil(x) - 1 if end else math.floor(x)
        return c0 + max(0, min(n - 1, k))

    def folds(self) -> list[tuple[int, float]]:
        """Each fold's column and the quiet time it stands for."""
        return [(self.cols[i] + self.widths[i], self.starts[i + 1] - self.ends[i]) for i in range(len(self.starts) - 1)]


def _finite(x: object) -> float | None:
    """A time the clock functions can show: a number from 1970 to the year 9999, else None."""
    if isinstance(x, bool) or not isinstance(x, int | float) or not 0 <= x <= LAST_TIME:
        return None
    return float(x)


def clean_spans(chart: Chart, now: float | None = None) -> list[list[tuple[float, float, str]]]:
    """Each lane's spans as (start, end, kind) with usable times.

    A span with no usable start is dropped; one ending before it starts is an instant; an unknown kind
    is drawn as done. Open spans end at `now` (else the chart's `now`), but never before the latest
    time in the chart (a clock behind the data) nor before their own start."""
    lanes: list[list[tuple[float, float | None, str]]] = []
    latest: float | None = None
    for lane in chart.lanes:
        out: list[tuple[float, float | None, str]] = []
        for span in lane.spans:
            start = _finite(span.start)
            if start is None:
                continue
            end = None if span.end is None else _finite(span.end)
            if end is None:
                end = None if span.end is None else start  # a broken end: an instant
            elif end < start:
                end = start
            out.append((start, end, span.kind if span.kind in KINDS else DONE))
            last = start if end is None else end
            if latest is None or last > latest:
                latest = last
        lanes.append(out)
    given = _finite(now) if now is not None else (None if chart.now is None else _finite(chart.now))
    open_end = latest if given is None else (given if latest is None else max(given, latest))
    return [[(s, max(s, e if e is not None else (open_end if open_end is not None else s)), k) for s, e, k in lane]
            for lane in lanes]


def _busy(times: list[float], spans: list[list[tuple[float, float, str]]]) -> list[bool]:
    """For each gap between two consecutive `times`, whether some work (not a wait) spans it."""
    index = {t: i for i, t in enumerate(times)}
    delta = [0] * (len(times) + 1)
    for lane in spans:
        for start, end, kind in lane:
            if kind != WAITING and end > start:
                delta[index[start]] += 1
                delta[index[end]] -= 1
    busy, depth = [], 0
    for i in range(len(times) - 1):
        depth += delta[i]
        busy.append(depth > 0)
    return busy


def _axis(times: list[float], busy: list[bool], width: int, min_idle: float) -> _Axis:
    """Stretches of `times` (sorted, distinct) with the longest quiet gaps folded, columns shared by length."""
    t0, t1 = times[0], times[-1]
    if t1 - t0 < MIN_SPAN:
        t1 = t0 + MIN_SPAN
        times = [*times, t1]
    rest = t1 - t0  # the time still drawn to scale
    chosen: list[int] = []
    for gap, i in sorted(((times[i + 1] - times[i], i) for i in range(len(times) - 1)), reverse=True):
        if len(chosen) >= width // FOLD_EVERY or gap < max(min_idle, FOLD_SHARE * rest):
            break
        if gap >= (BUSY_IDLE if i < len(busy) and busy[i] else min_idle):
            chosen.append(i)
            rest -= gap
    folded = sorted(chosen)
    starts, ends = [t0], []
    for i in folded:
        ends.append(times[i])
        starts.append(times[i + 1])
    ends.append(t1)
    free = width - len(folded)
    lengths = [b - a for a, b in zip(starts, ends, strict=True)]
    widths = _share(lengths, free)
    cols, c = [], 0
    for n in widths:
        cols.append(c)
        c += n + 1
    return _Axis(tuple(starts), tuple(ends), tuple(cols), tuple(widths), width)


def _share(lengths: list[float], columns: int) -> list[int]:
    """`columns` split in proportion to `lengths`, at least one each (largest remainders get the rest)."""
    count = len(lengths)
    spare = columns - count
    whole = sum(lengths)
    if whole <= 0:
        raw = [spare / count] * count
    else:
        raw = [spare * x / whole for x in lengths]
    widths = [1 + int(r) for r in raw]
    left = columns - sum(widths)
    for i in sorted(range(count), key=lambda j: raw[j] - int(raw[j]), reverse=True)[:max(0, left)]:
        widths[i] += 1
    return widths


def _interval(seconds_per_col: float, label_len: int) -> float:
    want = seconds_per_col * (label_len + LABEL_GAP + 1)
    return next((float(n) for n in NICE if n >= want), float(NICE[-1]) * math.ceil(want / NICE[-1]))


def _fmt(interval: float) -> str:
    if interval < 60:
        return "%H:%M:%S"
    if interval < 86400:
        return "%H:%M"
    return "%b %d"


def _axis_lines(axis: _Axis, local: Local) -> tuple[Text, Text]:
    """The labels row and the rule row of the axis."""
    active = sum(b - a for a, b in zip(axis.starts, axis.ends, strict=True))
    per_col = active / max(1, sum(axis.widths))
    fmt = _fmt(_interval(per_col, 5))
    interval = _interval(per_col, len(time.strftime(fmt, local(axis.starts[0]))))
    fmt = _fmt(interval)  # the longer labels may have spread the ticks to whole minutes (or days)
    taken = [False] * axis.width
    labels: list[tuple[int, str, str]] = []

    def place(x: int, text: str, style: str, gap: int = LABEL_GAP) -> bool:
        lo, hi = max(0, x - gap), min(axis.width, x + len(text) + gap)
        if x < 0 or x + len(text) > axis.width or any(taken[lo:hi]):
            return False
        for i in range(x, x + len(text)):
            taken[i] = True
        labels.append((x, text, style))
        return True

    place(0, time.strftime(fmt, local(axis.starts[0])), "")
    for col, gap in axis.folds():  # left of its column, else right of it
        words = "≈" + ago(gap)
        place(col - len(words), words, "dim", 1) or place(col + 1, words, "dim", 1)
    ticks: list[int] = []
    for a, b, c0, n in zip(axis.starts, axis.ends, axis.cols, axis.widths, strict=True):
        offset = local(a).tm_gmtoff if interval >= 3600 else 0
        t = math.ceil((a + offset) / interval) * interval - offset
        if c0 > 0:  # where the time starts again after a fold
            place(c0, time.strftime(fmt, local(a)), "", 1)
        while t <= b:
            col = axis.col(t)
            if c0 <= col < c0 + n and place(col, time.strftime(fmt, local(t)), ""):
                ticks.append(col)
            t += interval
    labels.extend((col, FOLD, "dim") for col, _ in axis.folds() if not taken[col])
    row = Text()
    for x, text, style in sorted(labels):
        row.append(" " * (x - len(row.plain)))
        row.append(text, style=style)
    rule = ["─"] * axis.width
    for col in ticks:
        rule[col] = "┬"
    for col, _ in axis.folds():
        rule[col] = FOLD
    return row, Text("".join(rule), style="dim")


def _label(lane: Lane, width: int) -> Text:
    """The lane's name column: current mark, indent, name cut with … to `width` cells."""
    text = Text(CURRENT if lane.current else "  ", style="bold")
    text.append("  " * min(lane.depth, 4))
    text.append(strip_controls(lane.label), style="bold" if lane.current else ("dim" if lane.depth else ""))
    text.truncate(width, overflow="ellipsis", pad=True)
    return text


def _bar(spans: list[tuple[float, float, str]], axis: _Axis) -> Text:
    cells: list[str | None] = [None] * axis.width
    for start, end, kind in spans:  # later spans draw over earlier ones: the right end is the latest state
        first = axis.col(start)
        last = max(first, axis.col(end, end=True)) if end > start else first
        for c in range(first, last + 1):
            cells[c] = kind
    for col, _ in axis.folds():
        cells[col] = f"fold:{cells[col] or ''}"
    out = Text()
    c = 0
    while c < len(cells):  # one append per run of equal cells
        cell, n = cells[c], 1
        while c + n < len(cells) and cells[c + n] == cell:
            n += 1
        if cell is None:
            out.append(" " * n)
        elif cell.startswith("fold:"):
            out.append(FOLD * n, style=STYLE.get(cell[5:], "dim"))
        else:
            out.append(GLYPH[cell] * n, style=STYLE[cell])
        c += n
    return out


def legend(kinds: Iterable[str], folds: list[float], width: int, current: bool) -> Text:
    """The kinds drawn (and folds, and the current mark), as many as fit `width`."""
    drawn = set(kinds)
    items = [(GLYPH[k], STYLE[k], k) for k in KINDS if k in drawn]
    if folds:
        shown = ", ".join(ago(g) for g in folds[:3]) + (" …" if len(folds) > 3 else "")
        items.append((FOLD, "dim", f"{shown} folded"))
    if current:
        items.append(("▶", "bold", "now"))
    out = Text()
    for glyph, style, words in items:
        piece = len(glyph) + 1 + len(words) + (2 if out.plain else 0)
        if out.cell_len + piece > width:
            break
        if out.plain:
            out.append("  ")
        out.append(glyph, style=style)
        out.append(" " + words, style="dim")
    return out


def _list(chart: Chart, spans: list[list[tuple[float, float, str]]], width: int) -> list[Text]:
    """The narrow form: one line per lane, its name then its status (else its last span's kind)."""
    lines = []
    for lane, mine in zip(chart.lanes, spans, strict=True):
        line = Text(CURRENT if lane.current else "  ", style="bold")
        line.append("  " * min(lane.depth, 4))
        line.append(strip_controls(lane.label), style="bold" if lane.current else "")
        words = strip_controls(lane.status) or (mine[-1][2] if mine else "")
        if words:
            line.append(" " + words, style=STYLE.get(mine[-1][2], "") if mine else "dim")
        line.truncate(width, overflow="ellipsis")
        lines.append(line)
    return lines


def render(chart: Chart, width: int, *, now: float | None = None, local: Local = time.localtime,
           min_idle: float = MIN_IDLE) -> list[Text]:
    """The chart as lines of at most `width` cells: axis, one row per lane, legend (or a list when narrow)."""
    width = max(1, int(width))
    hidden = max(0, len(chart.lanes) - MAX_LANES)
    if hidden:
        chart = Chart(chart.lanes[:MAX_LANES], chart.now)
    lines = _drawn(chart, width, now, local, min_idle)
    if hidden:
        lines.append(Text(f"… {hidden} more rows", style="dim"))
    for line in lines:
        line.no_wrap = True
        line.overflow = "crop"
        if line.cell_len > width:
            line.truncate(width)
    return lines


def _drawn(chart: Chart, width: int, now: float | None, local: Local, min_idle: float) -> list[Text]:
    spans = clean_spans(chart, now)
    if not chart.lanes:
        return [Text("(nothing to draw)", style="dim")]
    label_w = max(len(CURRENT) + 2 * min(lane.depth, 4) + Text(strip_controls(lane.label)).cell_len
                  for lane in chart.lanes)
    label_w = max(6, min(label_w, width // 3))
    bar_w = width - label_w - 1
    times = sorted({t for lane in spans for s, e, _ in lane for t in (s, e)})
    if bar_w < MIN_BARS or not times:
        lines = _list(chart, spans, width)
        note = "(too narrow for the time bars)"
        if times and width >= len(note):
            lines.append(Text(note, style="dim"))
        return lines
    axis = _axis(times, _busy(times, spans), bar_w, min_idle)
    labels, rule = _axis_lines(axis, local)
    pad = Text(" " * (label_w + 1))
    lines = [pad + labels, pad + rule]
    for lane, mine in zip(chart.lanes, spans, strict=True):
        lines.append(_label(lane, label_w) + Text(" ") + _bar(mine, axis))
    kinds = {k for lane in spans for _, _, k in lane}
    lines.append(legend(kinds, [g for _, g in axis.folds()], width, any(lane.current for lane in chart.lanes)))
    return lines


class Bars:
    """A chart as a Rich renderable: drawn at the width it is given, so it fits any terminal or pane."""

    def __init__(self, chart: Chart, now: float | None = None, local: Local = time.localtime) -> None:
        self.chart, self.now, self.local = chart, now, local

    def content_key(self) -> tuple[object, ...]:
        """What the drawing depends on: the chart, and the clock only while a span is open."""
        still_open = any(span.end is None for lane in self.chart.lanes for span in lane.spans)
        return ("bars", self.chart, self.now if still_open else None)

    def lines(self, width: int) -> list[Text]:
        return render(self.chart, width, now=self.now, local=self.local)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n").join(self.lines(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


__all__ = ["Bars", "Chart", "Lane", "Span", "clean_spans", "legend", "render"]
