"""Reads and writes off the UI thread: a thread worker runs the call, a message brings its answer back.

`off_thread(node, call, then, group=...)` runs `call()` in a thread worker of `node` and posts an
`Answered` to the app with its value (or the error it raised, when it is one of `errors`); the app
calls `then(value, error)` on the UI thread, unless the answer is stale: a newer call of the same
group on the same node replaced it (exclusive), or the node left the screen meanwhile. So the UI
thread never waits on a store lock, an SQLite database or a file being read; keys keep working.

A write (`exclusive=False`) is never replaced: its answer always comes back, so a refusal is shown
and a success is followed up, whatever the operator did meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker, get_current_worker

Then = Callable[[Any, BaseException | None], None]


class Answered(Message, bubble=False):
    """The answer of one call run off the UI thread."""

    def __init__(self, node: DOMNode, worker: Worker[None], then: Then,
                 value: Any, error: BaseException | None) -> None:
        super().__init__()
        self.node = node
        self.worker = worker
        self.then = then
        self.value = value
        self.error = error

    def deliver(self) -> None:
        """Hand the answer to `then`, unless it is stale (replaced, or its node is gone)."""
        if self.worker.is_cancelled:
            return
        if self.node is not self.node.app and not getattr(self.node, "is_attached", True):
            return
        self.then(self.value, self.error)


def off_thread(node: DOMNode, call: Callable[[], Any], then: Then, *,
               group: str, exclusive: bool = True,
               errors: tuple[type[BaseException], ...] = ()) -> Worker[None]:
    """Run `call` in a thread worker of `node`; `then(value, error)` runs on the UI thread with its answer.

    Errors of the types in `errors` are answers (`then` shows them); any other error fails the worker as
    an error on the UI thread would have failed the app."""
    app = node.app

    def run() -> None:
        worker = get_current_worker()
        try:
            value, error = call(), None
        except errors as exc:
            value, error = None, exc
        if not worker.is_cancelled and app.is_running:
            app.post_message(Answered(node, worker, then, value, error))

    return node.run_worker(run, name=group, group=group, thread=True, exclusive=exclusive)


class OneAtATime:
    """At most one read of a view in flight: a view asked again while its read runs (every batch of a busy
    runtime asks) reads once more when that one answers, with the latest call, instead of piling threads
    up behind a slow database."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.busy = False
        self._next: tuple[Callable[[], Any], Then] | None = None

    @property
    def queued(self) -> bool:
        """Another read waits for the one in flight: what that one answers is not the newest."""
        return self._next is not None

    def run(self, node: DOMNode, call: Callable[[], Any], then: Then) -> None:
        if self.busy:
            self._next = (call, then)
            return
        self.busy = True

        def answered(value: Any, error: BaseException | None) -> None:
            self.busy = False
            then(value, error)
            if self._next is not None:
                again, self._next = self._next, None
                self.run(node, *again)

        off_thread(node, call, answered, group=self.group)
