"""The `kind` of an error line (`{"error": "...", "kind": "plan_changed"}`), by name.

Other processes (the fleet, scripts) decide on the kind and the exit status (`exit_codes`), never on the
wording of `error`, which is for people and may change. Part of the versioned JSON contract: a kind is
never renamed or reused for something else; new ones may be added.
"""

from __future__ import annotations

ERROR = "error"  # nothing more specific is known
USAGE = "usage"  # the command line itself was wrong (exit status USAGE)
BAD_INPUT = "bad_input"  # a value given to the command is not acceptable (bad JSON, a bad name, a wrong type)
BAD_CONFIG = "bad_config"  # the configuration file cannot be used
NO_PROJECT = "no_project"  # no project root (.rcs/) where one was looked for
NOT_FOUND = "not_found"  # the thing named (a journal entry, a session, a mode, a task, a run, a finding) is not there
REFUSED = "refused"  # a change was refused (or failed and was rolled back); the message says what changed
POLICY_DENIED = "policy_denied"  # the transition policy does not allow that activation
REFUSED_CHANGED = "refused_changed"  # a file changed underneath between reading and writing; nothing was written
PLAN_CHANGED = "plan_changed"  # the plan made now is not the one confirmed (--expect-plan); nothing was written
LOCK_BUSY = "lock_busy"  # another rcs-tui process held the store lock for the whole wait
UNSAFE_PATH = "unsafe_path"  # a path rcs-tui must not touch (outside its trees, a symlink, not a regular file)
IO_ERROR = "io_error"  # a file-system failure
ABORTED = "aborted"  # interrupted (Ctrl-C) or declined
INTERNAL = "internal"  # a bug: an unexpected exception

KINDS = (ERROR, USAGE, BAD_INPUT, BAD_CONFIG, NO_PROJECT, NOT_FOUND, REFUSED, POLICY_DENIED, REFUSED_CHANGED,
         PLAN_CHANGED, LOCK_BUSY, UNSAFE_PATH, IO_ERROR, ABORTED, INTERNAL)


def kind_of(exc: BaseException, default: str = ERROR) -> str:
    """The kind an exception carries (its `error_kind`), else `default`."""
    kind = getattr(exc, "error_kind", None)
    return kind if isinstance(kind, str) else default
