"""One state-machine model for rp1 workflows (seed 004) and the task lifecycle (seed 003).

Both are Mermaid `stateDiagram-v2` graphs. This module extracts the diagram from a markdown
`## STATE-MACHINE` section, parses the supported subset strictly (anything else is an error naming
the line) and answers graph questions: next states, predecessors, reachability, BFS order, and the
step / transition validation messages of seed 004. Pure: no I/O besides reading packaged data.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

HEADER = "stateDiagram-v2"
START = "[*]"
_ID = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_TRANSITION = re.compile(rf"^(?P<src>\[\*\]|{_ID}?)\s*-->\s*(?P<dst>\[\*\]|{_ID})\s*(?::(?P<label>.*))?$")
_STATE_DECL = re.compile(rf"^state\s+(?P<id>{_ID})\s*(?::(?P<label>.*))?$")
_STATE_ALIAS = re.compile(rf'^state\s+"(?P<label>[^"]*)"\s+as\s+(?P<id>{_ID})$')
_STATE_LABEL = re.compile(rf"^(?P<id>{_ID})\s*:(?P<label>.*)$")
_SECTION = "## STATE-MACHINE"


class MachineError(ValueError):
    """The diagram uses syntax outside the supported subset, or is incomplete."""


@dataclass(frozen=True)
class Edge:
    """A state-to-state transition; the label is informational only."""

    source: str
    target: str
    label: str | None = None


@dataclass(frozen=True)
class StateMachine:
    """A parsed diagram. Validation works on edges, never on labels."""

    name: str
    states: tuple[str, ...]
    labels: dict[str, str] = field(hash=False)
    initial: tuple[str, ...]
    terminal: tuple[str, ...]
    edges: tuple[Edge, ...]

    def next_states(self, state: str) -> tuple[str, ...]:
        """Distinct targets of edges leaving `state`, in diagram order."""
        return _unique(e.target for e in self.edges if e.source == state)

    def has_edge(self, a: str, b: str) -> bool:
        return any(e.source == a and e.target == b for e in self.edges)

    def direct_predecessors(self, state: str) -> tuple[str, ...]:
        """States with an edge into `state` (used for predecessor auto-completion)."""
        return _unique(e.source for e in self.edges if e.target == state)

    def transitive_predecessors(self, state: str) -> frozenset[str]:
        """Every state from which `state` can be reached; includes `state` only on a cycle."""
        return self._walk(state, self.direct_predecessors)

    def reachable_from(self, state: str) -> frozenset[str]:
        """Every state reachable from `state` by one or more edges."""
        return self._walk(state, self.next_states)

    def sinks(self) -> tuple[str, ...]:
        """States with no outgoing state-to-state edge (terminal in practice)."""
        return tuple(s for s in self.states if not self.next_states(s))

    def bfs_order(self) -> tuple[str, ...]:
        """Breadth-first from the initial states, then unreached states in appearance order."""
        seen: list[str] = []
        queue = deque(self.initial)
        while queue:
            state = queue.popleft()
            if state in seen:
                continue
            seen.append(state)
            queue.extend(s for s in self.next_states(state) if s not in seen)
        return tuple(seen) + tuple(s for s in self.states if s not in seen)

    def validate_step(self, step: str, current: str | None = None) -> str | None:
        """None if `step` is a state (or a namespaced `agent:state` step), else seed 004's message."""
        if ":" in step or step in self.states:
            return None
        msg = (f'step "{step}" is not a valid state in the "{self.name}" state machine. '
               f"Valid states: [{', '.join(self.states)}].")
        if current is not None:
            msg += (f' Current state: "{current}". '
                    f'Valid transitions from "{current}": [{", ".join(self.next_states(current))}].')
        return msg

    def validate_transition(self, src: str | None, dst: str) -> str | None:
        """None if moving from `src` (None = first step of a run) to `dst` is allowed.

        Re-entering the current step is idempotent and always allowed; namespaced steps bypass
        the machine.
        """
        bad = self.validate_step(dst, src)
        if bad or ":" in dst:
            return bad
        if src is None:
            if dst in self.initial:
                return None
            return (f"Invalid first step '{dst}'. The first step must be an initial state: "
                    f"{', '.join(self.initial)}")
        if src == dst or self.has_edge(src, dst):
            return None
        if src not in self.states:
            return f"Invalid transition from '{src}' to '{dst}'. '{src}' is not a state of \"{self.name}\""
        return (f"Invalid transition from '{src}' to '{dst}'. "
                f"Valid next states: {', '.join(self.next_states(src)) or '(none)'}")

    def _walk(self, start: str, step: Callable[[str], tuple[str, ...]]) -> frozenset[str]:
        found: set[str] = set()
        queue = deque(step(start))
        while queue:
            state = queue.popleft()
            if state in found:
                continue
            found.add(state)
            queue.extend(step(state))
        return frozenset(found)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return tuple(out)


def extract_state_machine(markdown: str) -> str | None:
    """The body of the first mermaid fence holding `stateDiagram-v2` in `## STATE-MACHINE`, else None.

    The section starts at the first line that is exactly `## STATE-MACHINE` (trailing whitespace
    allowed) and ends at the next `## ` heading or end of file. An unclosed fence runs to the end
    of the section.
    """
    lines = markdown.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip() == _SECTION)
    except StopIteration:
        return None
    section: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        section.append(line)
    i = 0
    while i < len(section):
        if section[i].strip().startswith("```mermaid") and section[i].strip()[len("```mermaid"):].strip() == "":
            body: list[str] = []
            i += 1
            while i < len(section) and not section[i].strip().startswith("```"):
                body.append(section[i])
                i += 1
            text = "\n".join(body)
            if HEADER in text:
                return text + "\n"
        i += 1
    return None


def _reject(line: str) -> str | None:
    """Why a line uses an unsupported construct, or None."""
    low = line.lower()
    if line in ("--", "---") or re.fullmatch(r"-{2,}", line):
        return "concurrency regions (`--`) are not supported"
    if "<<fork>>" in low or "<<join>>" in low or "<<choice>>" in low:
        return "fork/join/choice pseudo-states are not supported"
    if re.match(r"^state\b.*\{", line) or line.startswith("{") or line == "}":
        return "composite states (`state X { ... }`) are not supported"
    if re.match(r"^note\b", low) or low == "end note":
        return "notes are not supported"
    if re.match(r"^direction\b", low):
        return "direction directives are not supported"
    return None


def parse_machine(text: str, name: str = "") -> StateMachine:
    """Parse a `stateDiagram-v2` body. Raises MachineError naming the offending line."""
    states: list[str] = []
    labels: dict[str, str] = {}
    initial: list[str] = []
    terminal: list[str] = []
    edges: list[Edge] = []
    header_seen = False

    def add(state: str) -> None:
        if state not in states:
            states.append(state)

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%%"):
            continue
        where = f"line {number}: {line[:120]!r}"
        if not header_seen:
            if line != HEADER:
                raise MachineError(f"{where}: expected the diagram to start with '{HEADER}'")
            header_seen = True
            continue
        why = _reject(line)
        if why:
            raise MachineError(f"{where}: {why}")
        if m := _TRANSITION.match(line):
            src, dst = m["src"], m["dst"]
            label = (m["label"] or "").strip() or None
            if not src:
                raise MachineError(f"{where}: transition without a source state")
            if src == START and dst == START:
                raise MachineError(f"{where}: '[*] --> [*]' connects no state")
            if src == START:
                add(dst)
                if dst not in initial:
                    initial.append(dst)
            elif dst == START:
                add(src)
                if src not in terminal:
                    terminal.append(src)
            else:
                add(src)
                add(dst)
                edge = Edge(src, dst, label)
                if edge not in edges:
                    edges.append(edge)
            continue
        if line.startswith("state "):
            m = _STATE_ALIAS.match(line) or _STATE_DECL.match(line)
            if not m:
                raise MachineError(f"{where}: unsupported state declaration")
            add(m["id"])
            if m["label"] and m["label"].strip():
                labels[m["id"]] = m["label"].strip()
            continue
        if m := _STATE_LABEL.match(line):
            add(m["id"])
            if m["label"].strip():
                labels[m["id"]] = m["label"].strip()
            continue
        if line == HEADER:
            raise MachineError(f"{where}: a second '{HEADER}' header; one state machine per diagram")
        raise MachineError(f"{where}: unsupported syntax")

    if not header_seen:
        raise MachineError(f"empty diagram: expected '{HEADER}'")
    if not initial:
        raise MachineError("No initial state defined. Add a '[*] --> state_id' transition.")
    return StateMachine(name, tuple(states), labels, tuple(initial), tuple(terminal), tuple(edges))


def machine_from_markdown(markdown: str, name: str) -> StateMachine | None:
    """The machine of a skill/agent markdown file, or None when it declares none (untracked)."""
    body = extract_state_machine(markdown)
    return None if body is None else parse_machine(body, name)


@cache
def load_task_lifecycle() -> StateMachine:
    """Seed 003's task lifecycle, parsed from the packaged `task_lifecycle.mmd`."""
    from importlib.resources import files

    text = files("rcs_tui.core").joinpath("task_lifecycle.mmd").read_text(encoding="utf-8")
    return parse_machine(text, "task")
