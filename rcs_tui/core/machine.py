"""One state-machine model for rp1 workflows and the task lifecycle.

Both are Mermaid `stateDiagram-v2` graphs. This module extracts the diagram from a markdown
`## STATE-MACHINE` section the way rp1 does, reads the supported subset with Mermaid's own token
rules (state ids, `%%` comments, several statements on one line), rejects everything else with an
error naming the line, and answers graph questions: next states, predecessors, reachability, BFS
order, and rp1's step / transition validation messages. Pure: no I/O besides reading
packaged data.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property

HEADER = "stateDiagram-v2"
START = "[*]"
# Mermaid's state id: any run of characters but `:`, `-`, `{` and whitespace (so `état` is one
# id, while `x-ray` is `x` followed by a stray `-`).
_ID = r"[^:\s{-]+"
_STATE_DECL = re.compile(rf"^state\s+(?P<id>{_ID})\s*(?::(?P<label>.*))?$", re.IGNORECASE)
_STATE_ALIAS = re.compile(rf'^state\s+"(?P<label>[^"]*)"\s+as\s+(?P<id>{_ID})$', re.IGNORECASE)
_SECTION = re.compile(r"## STATE-MACHINE\s*")
_FENCE_OPEN = re.compile(r"```mermaid\s*")
_FENCE_CLOSE = re.compile(r"```\s*")
# One token of a statement line, tried in Mermaid's lexer order at each position.
_TOKEN = re.compile(rf"(?P<edge>\[\*\])|(?P<arrow>-->)|(?P<descr>:[^\n]+)|(?P<id>{_ID})")


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

    @cached_property
    def _out(self) -> dict[str, tuple[str, ...]]:
        """Each state's distinct targets in diagram order: every graph question is then linear in the diagram."""
        out: dict[str, dict[str, None]] = {}
        for e in self.edges:
            out.setdefault(e.source, {})[e.target] = None
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _in(self) -> dict[str, tuple[str, ...]]:
        into: dict[str, dict[str, None]] = {}
        for e in self.edges:
            into.setdefault(e.target, {})[e.source] = None
        return {k: tuple(v) for k, v in into.items()}

    @cached_property
    def _state_set(self) -> frozenset[str]:
        return frozenset(self.states)

    def next_states(self, state: str) -> tuple[str, ...]:
        """Distinct targets of edges leaving `state`, in diagram order."""
        return self._out.get(state, ())

    def has_edge(self, a: str, b: str) -> bool:
        return b in self._out.get(a, ())

    def direct_predecessors(self, state: str) -> tuple[str, ...]:
        """States with an edge into `state` (used for predecessor auto-completion)."""
        return self._in.get(state, ())

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
        seen: dict[str, None] = {}
        queue = deque(self.initial)
        while queue:
            state = queue.popleft()
            if state in seen:
                continue
            seen[state] = None
            queue.extend(s for s in self.next_states(state) if s not in seen)
        return tuple(seen) + tuple(s for s in self.states if s not in seen)

    def validate_step(self, step: str, current: str | None = None) -> str | None:
        """None if `step` is a state (or a namespaced `agent:state` step), else rp1's message."""
        if ":" in step or step in self._state_set:
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
        if src not in self._state_set:
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


def extract_state_machine(markdown: str) -> str | None:
    """The body of the first mermaid fence holding `stateDiagram-v2` in `## STATE-MACHINE`, else None.

    The section starts at the first line that is exactly `## STATE-MACHINE` (trailing whitespace
    allowed) and ends at the next `## ` heading or end of file. A block opens at a line that is
    ```` ```mermaid ```` and closes only at a bare ```` ``` ```` line (other fences inside are
    body). A block never closed yields no machine at all: the file is untracked, as for rp1.
    """
    lines = markdown.split("\n")
    start = next((i for i, line in enumerate(lines) if _SECTION.fullmatch(line)), None)
    if start is None:
        return None
    body: list[str] | None = None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if body is None:
            if _FENCE_OPEN.fullmatch(line.strip()):
                body = []
        elif _FENCE_CLOSE.fullmatch(line.strip()):
            text = "\n".join(body)
            if HEADER in text:
                return text if text.endswith("\n") else text + "\n"
            body = None
        else:
            body.append(line)
    return None


def _reject(line: str) -> str | None:
    """Why a line uses a construct outside the supported subset, or None."""
    low = line.lower()
    if re.fullmatch(r"-{2,}", line):
        return "concurrency regions (`--`) are not supported"
    if re.search(r"<<(fork|join|choice)>>|\[\[(fork|join|choice)]]", low):
        return "fork/join/choice pseudo-states are not supported"
    if "{" in line.partition(":")[0] or line == "}":  # a label may hold braces
        return "composite states (`state X { ... }`) are not supported"
    if re.match(r"note\s", low) or low == "end note":
        return "notes are not supported"
    if re.search(r"(^|\s)direction\s+(tb|bt|rl|lr)\b", low) or low.startswith("direction"):
        return "direction directives are not supported"
    if re.match(r"(classdef|class|style|scale)\s|acctitle\s*:|accdescr\s*[:{]", low) \
            or low == "hide empty description" or ":::" in line:
        return "unsupported syntax: styling and accessibility statements are not supported"
    return None


def _strip_comment(line: str) -> str:
    """The line without its `%%` comment: `%%` ends the line wherever it starts, except inside a
    `: label`, which Mermaid reads to the end of the line. (`_tokens` applies Mermaid's exact rule.)"""
    i = 0
    while i < len(line):
        if line[i] == ":" and not line.startswith(":::", i):
            return line
        if line.startswith("%%", i):
            return line[:i].rstrip()
        i += 1
    return line


def _tokens(line: str, where: str) -> list[tuple[str, str]]:
    """The line as Mermaid tokens (kind, text); a character Mermaid cannot read is an error."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(line):
        if line.startswith("%%", i) or (line.startswith("%%", i + 1) and line[i] != "}"):
            break  # a comment; Mermaid's rule also swallows the one character before a `%%`
        if line[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(line, i)
        if not m:
            hint = " (a state id cannot contain '-')" if line[i] == "-" and i and not line[i - 1].isspace() else ""
            raise MachineError(f"{where}: not valid Mermaid: unexpected {line[i]!r} at column {i + 1}{hint}")
        kind = m.lastgroup or ""
        out.append((kind, m.group()[1:].strip() if kind == "descr" else m.group()))
        i = m.end()
    return out


def _statements(tokens: list[tuple[str, str]], where: str) -> list[tuple[str, str | None, str | None]]:
    """Group tokens into Mermaid statements, as many as the line holds: `id [: label]` or
    `id --> id [: label]`. Each is (source, target or None, label or None)."""
    out: list[tuple[str, str | None, str | None]] = []

    def ident(at: int) -> str:
        if at >= len(tokens) or tokens[at][0] not in ("id", "edge"):
            got = repr(tokens[at][1]) if at < len(tokens) else "the end of the line"
            raise MachineError(f"{where}: not valid Mermaid: expected a state id, found {got}")
        return tokens[at][1]

    i = 0
    while i < len(tokens):
        src, dst, label = ident(i), None, None
        i += 1
        if i < len(tokens) and tokens[i][0] == "arrow":
            dst = ident(i + 1)
            i += 2
        if i < len(tokens) and tokens[i][0] == "descr":
            label = tokens[i][1] or None
            i += 1
        out.append((src, dst, label))
    return out


def parse_machine(text: str, name: str = "") -> StateMachine:
    """Parse a `stateDiagram-v2` body. Raises MachineError naming the offending line."""
    states: dict[str, None] = {}  # dicts as ordered sets: parsing stays linear in the diagram
    labels: dict[str, str] = {}
    initial: dict[str, None] = {}
    terminal: dict[str, None] = {}
    edges: dict[Edge, None] = {}
    header_seen = False

    def add(state: str) -> None:
        states.setdefault(state, None)

    for number, raw in enumerate(text.split("\n"), start=1):
        where = f"line {number}: {raw.strip()[:120]!r}"
        if raw.strip().startswith("%%{"):
            raise MachineError(f"{where}: unsupported syntax: directives (`%%{{...}}%%`) are not supported")
        line = _strip_comment(raw.strip())
        if not line:
            continue
        if not header_seen:
            if line != HEADER:
                raise MachineError(f"{where}: expected the diagram to start with '{HEADER}'")
            header_seen = True
            continue
        if line == HEADER:
            raise MachineError(f"{where}: a second '{HEADER}' header; one state machine per diagram")
        why = _reject(line)
        if why:
            raise MachineError(f"{where}: {why}")
        if re.match(r"state\s", line, re.IGNORECASE):
            m = _STATE_ALIAS.match(line) or _STATE_DECL.match(line)
            if not m:
                raise MachineError(f"{where}: unsupported state declaration")
            add(m["id"])
            if m["label"] and m["label"].strip():
                labels[m["id"]] = m["label"].strip()
            continue
        for src, dst, label in _statements(_tokens(raw.strip(), where), where):
            if dst is None:  # a declaration: `lonely` or `lonely : label`
                if src != START:
                    add(src)
                    if label:
                        labels[src] = label
            elif src == START and dst == START:
                continue  # connects no state: Mermaid draws it, rp1 skips it
            elif src == START:
                add(dst)
                initial.setdefault(dst, None)
            elif dst == START:
                add(src)
                terminal.setdefault(src, None)
            else:
                add(src)
                add(dst)
                edges.setdefault(Edge(src, dst, label), None)

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
    """The task lifecycle, parsed from the packaged `task_lifecycle.mmd`."""
    from importlib.resources import files

    text = files("rcs_tui.core").joinpath("task_lifecycle.mmd").read_text(encoding="utf-8")
    return parse_machine(text, "task")
