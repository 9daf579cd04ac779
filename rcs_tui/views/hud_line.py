"""The HUD as plain spans: one status line or a vertical stack, fitted to a width, no Rich, no Textual.

Everything here is a pure function of (World, now, preset, width): the `--once` path composes ANSI
from the fitted spans, the Textual HUD turns the same spans into Rich `Text`. Text from state files is
sanitized before it becomes a span, and truncation works on plain text, so it never cuts an escape
sequence. Which element comes first and which is dropped first follows this order (highest first):
members with health, error badge, member details, ended-mode outcomes, task phase, rp1 step, turns,
tokens, quota, session age, last activity, lifetime turns, data age.
"""

from __future__ import annotations

from rcs_tui.core.attention import WAITING_OUTCOMES
from rcs_tui.core.values import count
from rcs_tui.state.metrics import PRESET_ELEMENTS, parse_time
from rcs_tui.state.snapshot import Member, ModeFile
from rcs_tui.views.health import ASCII_GLYPHS, HEALTH_STYLE
from rcs_tui.views.health import HEALTH_GLYPH as GLYPHS  # noqa: N811 - the HUD's name for it
from rcs_tui.views.line_fit import ELLIPSIS, LABEL, STALE_AFTER, Seg, Span, at_time, data_age, place, plain, to_ansi
from rcs_tui.views.text import strip_controls
from rcs_tui.views.world import World

OUTCOME_STYLE = {"finished": "green", "failed": "red", "blocked": "yellow", "askuserQuestion": "magenta",
                 "userinterlude": "cyan"}
SHORT_NAMES = {"deep-interview": "interview", "autoresearch": "research", "ultraqa": "qa"}

# Re-exported: the Textual HUD and the tests take the fitting helpers from here.
__all__ = ["STALE_AFTER", "Seg", "Span", "build_segments", "clean", "data_age", "header", "plain", "render_spans",
           "template_segments", "to_ansi"]


def clean(value: object, limit: int = 60) -> str:
    """Untrusted text → one short plain line (no controls, no escapes)."""
    text = " ".join(strip_controls(value).split())
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


# -- durations and numbers -------------------------------------------------------------------
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
    if f is not None and f.error is not None:
        return f"{name}:unreadable", "red"  # what is on disk cannot be read: never older data in its place
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
        workers = count(workers)
        if workers:
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
    word = [] if m.health == "live" else [(f" {m.health}", hstyle if hstyle.startswith("bold") else f"bold {hstyle}")]
    f = m.file
    if m.health != "live" and f is not None and not f.tombstone and f.outcome.value in WAITING_OUTCOMES:
        word.append((" · waits for you", "bold magenta"))  # ended on a question: stale or not, it needs you
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
    rows: list[tuple[Span, ...]] = []
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


def outcome_segs(world: World, ascii_only: bool) -> list[Seg]:
    """Modes of the authoritative scope that have ended, labelled by the core's lifecycle outcome.

    Each carries its end time: it is shown while that is at most `RECENT_END` old.
    """
    members = {m.mode for m in world.snapshot.members}
    out = []
    arrow = "->" if ascii_only else "→"
    for mode, f in sorted(world.snapshot.authoritative.modes.items()):
        if mode in members or f.active or f.tombstone or f.error:
            continue
        outcome = f.outcome
        label = outcome.display
        end = _end_time(f)
        if label is None or end is None:
            continue
        style = "dim" if outcome.internal else OUTCOME_STYLE.get(label, "")
        name = SHORT_NAMES.get(mode, mode)
        out.append(Seg("outcomes", ((f"{name}{arrow}", "dim"), (label, style)), at=end))
    return out


def build_segments(world: World, now: float, preset: str = "focused", *, ascii_only: bool = False,
                   notices: tuple[str, ...] = ()) -> list[Seg]:
    """All HUD elements the preset allows, in display order, as shown at `now`."""
    return at_time(template_segments(world, preset, ascii_only=ascii_only, notices=notices), now)


def template_segments(world: World, preset: str = "focused", *, ascii_only: bool = False,
                      notices: tuple[str, ...] = ()) -> list[Seg]:
    """All HUD elements the preset allows, in display order; the clock-dependent ones carry their time."""
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
        segs += outcome_segs(world, ascii_only)
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
        segs.append(Seg("session", (), at=world.session_started))
    hud = world.hud_state
    if hud is not None and hud.last_turn_at is not None and "last" in allowed:
        segs.append(Seg("last", (), at=hud.last_turn_at))
    if m is not None and m.total_turns and "total_turns" in allowed:
        segs.append(Seg("total_turns", ((f"total-turns:{m.total_turns}", "dim"),)))
    if world.newest_write is not None and "age" in allowed:
        segs.append(Seg("age", (), at=world.newest_write))
    return segs


def header(world: World) -> list[Span]:
    """The stacked layout's first row: which scope is shown and why."""
    res = world.snapshot.resolution
    scope = "root" if res.session_id is None else f"session {clean(res.session_id, 40)}"
    spans: list[Span] = [(LABEL, "bold"), (" ", ""), (scope, ""), (f" ({res.source})", "dim")]
    if res.pointer.stale_dead:
        spans.append((" session.json stale-dead", "bold yellow"))
    return spans


def render_spans(world: World, now: float, width: int, height: int = 1, preset: str = "focused", *,
                 ascii_only: bool = False, notices: tuple[str, ...] = ()) -> list[list[Span]]:
    """The HUD for a `width` × `height` area: one fitted line, or a stack when taller than one row."""
    segs = template_segments(world, preset, ascii_only=ascii_only, notices=notices)
    return place(segs, header(world), now, width, height, ascii_only)


