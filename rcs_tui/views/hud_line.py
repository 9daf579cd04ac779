"""The HUD as plain spans: one status line or a vertical stack, fitted to a width, no Rich, no Textual.

Everything here is a pure function of (World, now, preset, width): the `--once` path composes ANSI
from the fitted spans, the Textual HUD turns the same spans into Rich `Text`. Text from state files is
sanitized before it becomes a span, and truncation works on plain text, so it never cuts an escape
sequence. Which element comes first and which is dropped first follows this order (highest first):
members with health, error badge, member details, ended-mode outcomes, task phase, rp1 step, turns,
tokens, quota, session age, last activity, lifetime turns, data age.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rcs_tui.state.metrics import PRESET_ELEMENTS, parse_time
from rcs_tui.state.snapshot import Member, ModeFile
from rcs_tui.views.text import ago, strip_controls
from rcs_tui.views.world import World

Span = tuple[str, str]  # (plain text, style tokens such as "bold green")

LABEL = "[RCS]"
SEP = " | "
ELLIPSIS = "…"
STALE_AFTER = 120.0  # seconds without a runtime write before the data reads as "stale"
RECENT_END = 15 * 60.0  # an ended mode's outcome is shown this long after it ended

HEALTH_STYLE = {"live": "green", "stale": "yellow", "orphan": "magenta", "root-survivor": "red"}
GLYPHS = {"live": "●", "stale": "○", "orphan": "◇", "root-survivor": "▲"}
ASCII_GLYPHS = {"live": "*", "stale": "o", "orphan": "?", "root-survivor": "^"}
OUTCOME_STYLE = {"finished": "green", "failed": "red", "blocked": "yellow", "askuserQuestion": "magenta",
                 "userinterlude": "cyan"}
SHORT_NAMES = {"deep-interview": "interview", "autoresearch": "research", "ultraqa": "qa"}

RANKS = {"members": 0, "errors": 1, "details": 2, "outcomes": 3, "task": 4, "rp1": 5, "notice": 6, "turns": 7,
         "tokens": 8, "quota": 9, "session": 10, "last": 11, "total_turns": 12, "age": 13}


@dataclass(frozen=True)
class Seg:
    """One HUD element: its spans, a shorter form (members without details) and its kind."""

    kind: str
    spans: tuple[Span, ...]
    short: tuple[Span, ...] | None = None
    lines: tuple[tuple[Span, ...], ...] = field(default=())  # extra rows in the stacked layout

    @property
    def rank(self) -> int:
        return RANKS.get(self.kind, 99)


def clean(value: object, limit: int = 60) -> str:
    """Untrusted text → one short plain line (no controls, no escapes)."""
    text = " ".join(strip_controls(value).split())
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def plain(spans: tuple[Span, ...] | list[Span]) -> str:
    return "".join(t for t, _ in spans)


# -- durations and numbers -------------------------------------------------------------------
def data_age(seconds: float) -> str:
    """The "updated … ago" figure: exact under 10 s, then in 10 s steps, then as `ago` (minutes).

    The live HUD repaints only when this text changes, so the steps are what keeps a full-screen
    HUD from repainting every second for the first minute after each write.
    """
    s = max(0, int(seconds))
    return ago(s - s % 10 if 10 <= s < 60 else s)


def tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def forge_style(i: int | None, top: int | None) -> str:
    """Green, yellow at ≥ 70 % of max iterations, red at ≥ 90 % (as the runtime colours forge)."""
    if i is None or not top or top <= 0:
        return "green"
    pct = i / top
    return "red" if pct >= 0.9 else "yellow" if pct >= 0.7 else "green"


# -- members ---------------------------------------------------------------------------------
def _input_lock(f: ModeFile, world: World) -> bool:
    data = f.data or {}
    if data.get("input_lock_active") is True:
        return True
    canonical = world.snapshot.authoritative.canonical
    lock = (canonical.data or {}).get("input_lock") if canonical is not None else None
    return lock is True or (isinstance(lock, dict) and lock.get("active") is True)


def member_detail(m: Member, world: World) -> tuple[str, str]:
    """(text, style) of a member's name plus details, e.g. `forge:3/10` or `team:login (3 workers, 2/5 done)`."""
    f = m.file
    name = SHORT_NAMES.get(m.mode, m.mode)
    if f is None or f.data is None:
        return name, ""
    data = f.data
    phase = clean(f.phase, 24) if f.phase else None
    if m.mode == "forge":
        i, top = f.iteration, f.max_iterations
        if i is None:
            return name, "green"
        return f"forge:{i}/{top if top else '?'}", forge_style(i, top)
    if m.mode == "blueprint":
        i = f.iteration
        if i is None:
            return f"blueprint:{phase}" if phase else name, "cyan"
        done = data.get("planning_complete") is True
        return f"blueprint:{i}/{i if done else '?'}", "cyan"
    if m.mode == "deep-interview":
        lock = ":lock" if _input_lock(f, world) else ""
        return f"interview:{phase or 'active'}{lock}", "cyan"
    if m.mode == "team":
        team_name = data.get("team_name")
        team = world.team_for(team_name if isinstance(team_name, str) else None)
        label = clean(team_name, 30) if isinstance(team_name, str) and team_name else (phase or "active")
        bits = []
        workers = team.worker_count if team and team.worker_count is not None else data.get("agent_count")
        if isinstance(workers, int) and not isinstance(workers, bool) and workers > 0:
            bits.append(f"{workers} workers")
        if team and team.total:
            bits.append(f"{team.done}/{team.total} done")
        return f"team:{label}" + (f" ({', '.join(bits)})" if bits else ""), "green"
    if m.mode == "ultrawork":
        return "ultrawork", "cyan"
    return f"{name}:{phase or 'active'}", "yellow" if m.mode == "autopilot" else "cyan"


def member_seg(m: Member, world: World, ascii_only: bool) -> Seg:
    glyph = (ASCII_GLYPHS if ascii_only else GLYPHS)[m.health]
    hstyle = HEALTH_STYLE[m.health]
    text, style = member_detail(m, world)
    if m.health != "live":
        style = hstyle
    word = [] if m.health == "live" else [(f" {m.health}", f"bold {hstyle}")]
    short_name = SHORT_NAMES.get(m.mode, m.mode)
    spans = ((glyph + " ", hstyle), (text, style), *word)
    short = ((glyph + " ", hstyle), (short_name, style), *word)
    rows = []
    if m.health != "live":
        rows.append((("    ", ""), (clean(m.reason, 200), "dim")))
    team_rows = _team_rows(m, world, ascii_only)
    return Seg("members", spans, short if short != spans else None, tuple(rows) + team_rows)


def _team_rows(m: Member, world: World, ascii_only: bool) -> tuple[tuple[Span, ...], ...]:
    if m.mode != "team" or m.file is None or not m.file.data:
        return ()
    team = world.team_for(m.file.data.get("team_name") if isinstance(m.file.data.get("team_name"), str) else None)
    if team is None:
        return ()
    rows = []
    if team.phase:
        rows.append((("    phase ", "dim"), (clean(team.phase, 24), "")))
    for w in team.workers[:8]:
        state_style = {"working": "green", "blocked": "yellow", "failed": "red", "done": "dim"}.get(w.state, "")
        state = f" {w.state}"
        if w.dead_reason:  # a worker whose process is gone is not "working", whatever its status file says
            state, state_style = " dead", "bold red"
        task = f" task {clean(w.current_task_id, 12)}" if w.current_task_id else ""
        rows.append((("    " + ("- " if ascii_only else "· "), "dim"), (clean(w.name, 20), ""),
                     (state, state_style), (task, "dim")))
    return tuple(rows)


# -- everything else -------------------------------------------------------------------------
def _end_time(f: ModeFile) -> float | None:
    data = f.data or {}
    for key in ("completed_at", "updated_at"):
        t = parse_time(data.get(key))
        if t is not None:
            return t
    return f.mtime


def outcome_segs(world: World, now: float, ascii_only: bool) -> list[Seg]:
    """Modes of the authoritative scope that ended recently, labelled by the core's lifecycle outcome."""
    members = {m.mode for m in world.snapshot.members}
    out = []
    arrow = "->" if ascii_only else "→"
    for mode, f in sorted(world.snapshot.authoritative.modes.items()):
        if mode in members or f.active or f.tombstone or f.error:
            continue
        outcome = f.outcome
        label = outcome.display
        end = _end_time(f)
        if label is None or end is None or now - end > RECENT_END:
            continue
        style = "dim" if outcome.internal else OUTCOME_STYLE.get(label, "")
        name = SHORT_NAMES.get(mode, mode)
        out.append(Seg("outcomes", ((f"{name}{arrow}", "dim"), (label, style))))
    return out


def build_segments(world: World, now: float, preset: str = "focused", *, ascii_only: bool = False,
                   notices: tuple[str, ...] = ()) -> list[Seg]:
    """All HUD elements the preset allows, in display order."""
    allowed = PRESET_ELEMENTS.get(preset, PRESET_ELEMENTS["focused"])
    segs: list[Seg] = [member_seg(m, world, ascii_only) for m in world.snapshot.members]
    if not segs:
        segs.append(Seg("members", (("No active modes.", "dim"),)))
    pointer = world.snapshot.resolution.pointer
    if pointer.stale_dead and "errors" in allowed:
        segs.append(Seg("errors", (("session.json stale-dead", "bold yellow"),)))
    if world.badges and "errors" in allowed:
        n = len(world.badges)
        rows = tuple((("  ! ", "red"), (clean(b.text(world.root), 200), "")) for b in world.badges)
        segs.append(Seg("errors", ((f"! {n} error{'s' if n != 1 else ''}", "bold red"),), lines=rows))
    if "outcomes" in allowed:
        segs += outcome_segs(world, now, ascii_only)
    task = world.current_task()
    if task and "task" in allowed:
        segs.append(Seg("task", (("task:", "dim"), (clean(task.id, 24), ""), (":" + (task.phase or "?"), "cyan"))))
    run = world.run
    if run and "rp1" in allowed:
        st = {"running": "green", "waiting": "yellow", "failed": "red"}.get(run.status, "dim")
        step = clean(run.step, 24) if run.step else "-"
        segs.append(Seg("rp1", (("rp1:", "dim"), (f"{clean(run.flow, 20)}/{step}", ""), (f" {run.status}", st))))
    for note in notices:
        segs.append(Seg("notice", ((clean(note, 80), "yellow"),)))
    m = world.metrics
    if m is not None and m.current_for(world.session_started):
        if m.session_turns is not None and "turns" in allowed:
            segs.append(Seg("turns", ((f"turns:{m.session_turns}", "dim"),)))
        if m.total_tokens and m.total_tokens > 0 and "tokens" in allowed:
            segs.append(Seg("tokens", ((f"tokens:{tokens(m.total_tokens)}", "dim"),)))
        quota = [f"{k}:{round(v)}%" for k, v in (("5h", m.five_hour_pct), ("wk", m.weekly_pct)) if v and v > 0]
        if quota and "quota" in allowed:
            segs.append(Seg("quota", ((f"quota:{','.join(quota)}", "dim"),)))
    if world.session_started is not None and "session" in allowed:
        segs.append(Seg("session", ((f"session:{ago(now - world.session_started)}", "dim"),)))
    hud = world.hud_state
    if hud is not None and hud.last_turn_at is not None and "last" in allowed:
        segs.append(Seg("last", ((f"last:{ago(now - hud.last_turn_at)} ago", "dim"),)))
    if m is not None and m.total_turns and "total_turns" in allowed:
        segs.append(Seg("total_turns", ((f"total-turns:{m.total_turns}", "dim"),)))
    if world.newest_write is not None and "age" in allowed:
        age = now - world.newest_write
        segs.append(Seg("age", ((f"stale {ago(age)}", "yellow"),) if age >= STALE_AFTER
                        else ((f"updated {data_age(age)} ago", "dim"),)))
    return segs


# -- fitting ---------------------------------------------------------------------------------
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


def header(world: World, now: float, ascii_only: bool = False) -> list[Span]:
    res = world.snapshot.resolution
    scope = "root" if res.session_id is None else f"session {clean(res.session_id, 40)}"
    spans: list[Span] = [(LABEL, "bold"), (" ", ""), (scope, ""), (f" ({res.source})", "dim")]
    if res.pointer.stale_dead:
        spans.append((" session.json stale-dead", "bold yellow"))
    return spans


PACKED = frozenset({"outcomes", "turns", "tokens", "quota", "session", "last", "total_turns", "age"})
PACK_SEP = " · "


def stack(segs: list[Seg], world: World, now: float, width: int, height: int,
          ascii_only: bool = False) -> list[list[Span]]:
    """Vertical layout: a header, one row per element (plus detail rows), fitted to width × height.

    Small elements (outcomes, metrics, data age) share rows while they fit the width. When there are
    more rows than `height`, the least important rows go first and a `… N more` row says so.
    """
    rows: list[tuple[float, list[Span]]] = [(-1, header(world, now, ascii_only))]
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
        ranked = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
        keep = sorted(ranked[: max(1, height - 1)])
        dropped = len(rows) - len(keep)
        rows = [rows[i] for i in keep]
        if height >= 2:
            rows.append((99, [(f"{ELLIPSIS} {dropped} more", "dim")]))
    return [truncate(r[1], width) for r in rows]


def render_spans(world: World, now: float, width: int, height: int = 1, preset: str = "focused", *,
                 ascii_only: bool = False, notices: tuple[str, ...] = ()) -> list[list[Span]]:
    """The HUD for a `width` × `height` area: one fitted line, or a stack when taller than one row."""
    segs = build_segments(world, now, preset, ascii_only=ascii_only, notices=notices)
    if height <= 1:
        return [fit_line(segs, width)]
    return stack(segs, world, now, width, height, ascii_only)


# -- output ----------------------------------------------------------------------------------
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}


def to_ansi(spans: list[Span], color: bool = True) -> str:
    """Compose ANSI only after fitting, one complete SGR sequence per span."""
    spans = [(strip_controls(text), style) for text, style in spans]  # the only escapes are the ones added here
    if not color:
        return plain(spans)
    out = []
    for text, style in spans:
        codes = [_SGR[t] for t in style.split() if t in _SGR]
        out.append(f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes and text else text)
    return "".join(out)
