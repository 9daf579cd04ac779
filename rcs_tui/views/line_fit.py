"""HUD elements fitted to a width and height, and their ANSI form: the part of the HUD that needs no state.

`hud_line` turns a World into `Seg`s; this module places them (one line or a stack), applies the clock
(ages, "updated … ago", recently ended modes) and composes ANSI. It imports nothing beyond the
standard library's builtins, so the `hud --once` cache can render a stored result without loading the
readers, the dataclasses or Rich. A `Seg` whose `at` is set depends on the time: its text is made from
`now - at` when the line is rendered, never stored.
"""

from __future__ import annotations

Span = tuple[str, str]  # (plain text, style tokens such as "bold green")

LABEL = "[RCS]"
SEP = " | "
ELLIPSIS = "…"
STALE_AFTER = 120.0  # seconds without a runtime write before the data reads as "stale"
RECENT_END = 15 * 60.0  # an ended mode's outcome is shown this long after it ended

RANKS = {"members": 0, "errors": 1, "details": 2, "outcomes": 3, "task": 4, "rp1": 5, "notice": 6, "turns": 7,
         "tokens": 8, "quota": 9, "session": 10, "last": 11, "total_turns": 12, "age": 13}
# Small elements that share rows in the stacked layout while they fit the width.
PACKED = frozenset({"outcomes", "turns", "tokens", "quota", "session", "last", "total_turns", "age"})
PACK_SEP = " · "


def ends_in(segs: list[Seg], now: float) -> float | None:
    """Seconds until an element shown at `now` goes by the clock alone (an ended mode's outcome, once
    `RECENT_END` old); None when none will: a live view repaints then, not only when an age text moves."""
    ends = [s.at + RECENT_END - now for s in segs if s.kind == "outcomes" and s.at is not None]
    return min((e for e in ends if e >= 0), default=None)


class Seg:
    """One HUD element: its spans, a shorter form (members without details), extra stacked rows, its kind.

    `at` (epoch seconds) marks an element whose text depends on the clock: "session", "last" and
    "age" are written from `now - at`, an "outcomes" element is dropped once `at` is older than
    `RECENT_END`. `timed(now)` gives the element as shown at `now`.
    """

    __slots__ = ("kind", "spans", "short", "lines", "at")
    kind: str
    spans: tuple[Span, ...]
    short: tuple[Span, ...] | None
    lines: tuple[tuple[Span, ...], ...]
    at: float | None

    def __init__(self, kind: str, spans: tuple[Span, ...], short: tuple[Span, ...] | None = None,
                 lines: tuple[tuple[Span, ...], ...] = (), at: float | None = None) -> None:
        self.kind, self.spans, self.short, self.lines, self.at = kind, spans, short, lines, at

    def __repr__(self) -> str:
        return f"Seg({self.kind!r}, {self.spans!r}, short={self.short!r}, lines={self.lines!r}, at={self.at!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Seg) and self.as_json() == other.as_json()

    __hash__ = None  # type: ignore[assignment]  # unhashable (it defines __eq__); typeshed types it a method

    @property
    def rank(self) -> int:
        return RANKS.get(self.kind, 99)

    def timed(self, now: float) -> Seg | None:
        """This element at `now` (None when it is no longer shown)."""
        if self.at is None:
            return self
        age = now - self.at
        if self.kind == "outcomes":
            return None if age > RECENT_END else Seg(self.kind, self.spans, self.short, self.lines)
        if self.kind == "session":
            return Seg("session", ((f"session:{ago(age)}", "dim"),))
        if self.kind == "last":
            return Seg("last", ((f"last:{ago(age)} ago", "dim"),))
        if self.kind == "age":
            return Seg("age", ((f"stale {ago(age)}", "yellow"),) if age >= STALE_AFTER
                       else ((f"updated {data_age(age)} ago", "dim"),))
        return Seg(self.kind, self.spans, self.short, self.lines)

    # -- the cached form: JSON arrays, read back only after a full validation --------------------
    def as_json(self) -> list[object]:
        return [self.kind, [list(s) for s in self.spans], None if self.short is None else [list(s) for s in self.short],
                [[list(s) for s in row] for row in self.lines], self.at]

    @classmethod
    def from_json(cls, value: object) -> Seg:
        """A Seg from `as_json()`; ValueError/TypeError on any other shape."""
        if not isinstance(value, (list, tuple)):
            raise TypeError("bad segment")
        kind, spans, short, lines, at = value
        if not isinstance(kind, str) or not (at is None or isinstance(at, (int, float))):
            raise ValueError("bad segment")
        return cls(kind, _spans(spans), None if short is None else _spans(short),
                   tuple(_spans(row) for row in lines), at)


def _spans(value: object) -> tuple[Span, ...]:
    if not isinstance(value, (list, tuple)):
        raise TypeError("bad spans")
    out = []
    for text, style in value:
        if not isinstance(text, str) or not isinstance(style, str):
            raise ValueError("bad span")
        out.append((text, style))
    return tuple(out)


def spans_from_json(value: object) -> tuple[Span, ...]:
    return _spans(value)


# -- durations -------------------------------------------------------------------------------
def ago(seconds: float) -> str:
    """A compact duration: `42s`, `5m`, `2h07m`, `3d` (negative clock skew reads as 0s)."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d"


def data_age(seconds: float) -> str:
    """The "updated … ago" figure: exact under 10 s, then in 10 s steps, then as `ago` (minutes).

    The live HUD repaints only when this text changes, so the steps are what keeps a full-screen
    HUD from repainting every second for the first minute after each write.
    """
    s = max(0, int(seconds))
    return ago(s - s % 10 if 10 <= s < 60 else s)


# -- fitting ---------------------------------------------------------------------------------
def plain(spans: tuple[Span, ...] | list[Span]) -> str:
    return "".join(t for t, _ in spans)


def at_time(segs: list[Seg], now: float) -> list[Seg]:
    """The elements as shown at `now` (ages written, expired outcomes dropped)."""
    out = []
    for seg in segs:
        shown = seg.timed(now)
        if shown is not None:
            out.append(shown)
    return out


def truncate(spans: list[Span], width: int) -> list[Span]:
    """Cut spans to `width` cells, ending in `…` when something was cut (plain text, so no escape is split)."""
    total = sum(len(t) for t, _ in spans)
    if total <= width:
        return spans
    if width <= 0:
        return []
    out: list[Span] = []
    room = width - 1
    for text, style in spans:
        if room <= 0:
            break
        out.append((text[:room], style))
        room -= len(text[:room])
    out.append((ELLIPSIS, "dim"))
    return out


def _join(segs: list[Seg], use_short: set[int], label: bool) -> list[Span]:
    spans: list[Span] = [(LABEL, "bold"), (" ", "")] if label else []
    for i, seg in enumerate(segs):
        if i:
            spans.append((SEP, "dim"))
        spans.extend(seg.short if i in use_short and seg.short else seg.spans)
    return spans


def fit_line(segs: list[Seg], width: int, *, label: bool = True) -> list[Span]:
    """One line: drop the lowest-ranked elements first, then member details, then cut with `…`."""
    keep = list(segs)
    short: set[int] = set()

    def width_of() -> int:
        return len(plain(_join(keep, short, label)))

    while width_of() > width:
        droppable = [s for s in keep if s.kind != "members"]
        if droppable:
            keep.remove(max(droppable, key=lambda s: (s.rank, keep.index(s))))
            continue
        longer = [i for i, s in enumerate(keep) if s.short and i not in short]
        if not longer:
            break
        short.add(longer[-1])
    return truncate(_join(keep, short, label), width)


def stack(segs: list[Seg], head: list[Span], width: int, height: int, ascii_only: bool = False) -> list[list[Span]]:
    """Vertical layout: `head`, one row per element (plus detail rows), fitted to width × height.

    Small elements (outcomes, metrics, data age) share rows while they fit the width. When there are
    more rows than `height`, detail rows go first, the least important first, and a `… N more` row says
    so; when even one row per element is too many, the rows are filled as the one-line form fills its
    line, the most important elements first (`_flow`), so N rows never show less than one.
    """
    rows: list[tuple[float, list[Span]]] = [(-1, list(head))]
    packing: tuple[str, list[Span]] | None = None
    sep = " - " if ascii_only else PACK_SEP
    for seg in segs:
        group = "outcomes" if seg.kind == "outcomes" else "metrics" if seg.kind in PACKED else None
        if group and packing and packing[0] == group and len(plain(packing[1])) + len(sep) + len(
                plain(seg.spans)) <= width:
            packing[1].extend([(sep, "dim"), *seg.spans])
            continue
        row = list(seg.spans)
        rows.append((seg.rank, row))
        packing = (group, row) if group else None
        for sub in seg.lines:
            rows.append((seg.rank + 0.5, list(sub)))
    if len(rows) > height:
        elements = [i for i, r in enumerate(rows) if float(r[0]).is_integer()]  # the head and each element
        if len(elements) > height:  # not even one row each: fill the rows instead
            return _flow(segs, head, width, height)
        details = sorted((i for i, r in enumerate(rows) if not float(r[0]).is_integer()),
                         key=lambda i: (rows[i][0], i))
        room = height - len(elements) - 1  # a row for `… N more`
        keep = sorted(elements + details[:max(0, room)])
        dropped = len(rows) - len(keep)
        rows = [rows[i] for i in keep]
        if room >= 0:
            rows.append((99, [(f"{ELLIPSIS} {dropped} more", "dim")]))
    return [truncate(r[1], width) for r in rows]


def _flow(segs: list[Seg], head: list[Span], width: int, height: int) -> list[list[Span]]:
    """Too few rows for one element a row: fill each row as the one-line form does, the most important
    elements first (members and problems before counters), so N rows never show less than one; what does
    not fit is counted in a closing `… N more`."""
    order = sorted(range(len(segs)), key=lambda i: (segs[i].rank, i))
    rows: list[list[Span]] = [list(head)]
    placed: list[list[int]] = [[]]
    dropped = 0
    for i in order:
        spans = list(segs[i].spans)
        brief = segs[i].short
        short = list(brief) if brief else spans
        row = rows[-1]
        for form in (spans, short):
            if len(plain(row)) + len(SEP) + len(plain(form)) <= width:
                row.extend([(SEP, "dim"), *form])
                placed[-1].append(i)
                break
        else:
            if len(rows) < height:
                rows.append(truncate(spans if len(plain(spans)) <= width else short, width))
                placed.append([i])
            else:
                dropped += 1
    if dropped and height >= 2:
        last = rows[-1]
        def too_long() -> bool:
            return len(plain(last)) + len(SEP) + len(f"{ELLIPSIS} {dropped} more") > width

        while len(placed) > 1 and placed[-1] and too_long():
            placed[-1].pop()
            dropped += 1
            rows[-1] = last = _rebuild([segs[j] for j in placed[-1]], width) if placed[-1] else []
        marker = (f"{ELLIPSIS} {dropped} more", "dim")
        rows[-1] = [*last, (SEP, "dim"), marker] if last else [marker]
    return [truncate(r, width) for r in rows]


def _rebuild(segs: list[Seg], width: int) -> list[Span]:
    return truncate(_join(segs, set(), label=False), width)


def place(segs: list[Seg], head: list[Span], now: float, width: int, height: int = 1,
          ascii_only: bool = False) -> list[list[Span]]:
    """The HUD for a `width` × `height` area at `now`: one fitted line, or a stack when taller than one row."""
    shown = at_time(segs, now)
    if height <= 1:
        return [fit_line(shown, width)]
    return stack(shown, head, width, height, ascii_only)


# -- output ----------------------------------------------------------------------------------
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}


def to_ansi(spans: list[Span], color: bool = True) -> str:
    """Compose ANSI only after fitting, one complete SGR sequence per span.

    Span text goes through the one sanitiser first, so the only escapes in the output are the ones added here.
    """
    from rcs_tui.views.text import strip_controls  # here, not at the top: text imports this module

    spans = [(strip_controls(text), style) for text, style in spans]
    if not color:
        return plain(spans)
    out = []
    for text, style in spans:
        codes = [_SGR[t] for t in style.split() if t in _SGR]
        out.append(f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes and text else text)
    return "".join(out)
