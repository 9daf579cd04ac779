"""Operator actions on a fleet project, run through that project's own `rcs-tui … --json` CLI.

Locally that is this interpreter's rcs-tui; remotely the host's, over the same ssh transport as the
snapshot stream, so the host's lock, journal, undo and doctor apply there. Every call returns the CLI's
JSON (the same shapes the console previews and reports) or raises ActionError with the CLI's own message.
"""

from __future__ import annotations

from typing import Any

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import ERROR, FINDINGS_REMAIN, OK
from rcs_tui.files.io import loads_strict
from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.source import CannotRun, ProjectSource, open_source
from rcs_tui.fleet.transport import Ssh, error_line, failure_reason
from rcs_tui.views.text import strip_controls

TIMEOUT = 60.0


class ActionError(Exception):
    """The action was refused or could not run; the message says why (nothing was changed unless it says so).

    `kind` is the project's rcs-tui's error kind (`rcs_tui.core.error_kinds`), ERROR when it gave none."""

    def __init__(self, message: str, kind: str = kinds.ERROR) -> None:
        super().__init__(message)
        self.kind = kind


class PlanChangedError(ActionError):
    """The project's files changed after the operator confirmed a plan; nothing was written."""


class CliActions:
    """clear / undo / redo / override / doctor for one project, through its source (local or remote alike)."""

    def __init__(self, project: Project, ssh: Ssh | None = None, timeout: float = TIMEOUT,
                 source: ProjectSource | None = None) -> None:
        self.project = project
        self.source = source or open_source(project, ssh=ssh)
        self.timeout = timeout

    @property
    def where(self) -> str:
        return self.project.host_label

    def run(self, args: list[str]) -> dict[str, Any]:
        try:
            ran = self.source.run([*args, "--root", self.project.path, "--json"], self.timeout)
        except TimeoutError:
            raise ActionError(f"no answer from {self.where} within {self.timeout:g}s; the action may or may not "
                              "have run: check the journal") from None
        except CannotRun as exc:
            raise ActionError(str(exc)) from None
        out = ran.stdout.decode("utf-8", "replace")
        err = ran.stderr.decode("utf-8", "replace")
        # a refusal exits ERROR with its JSON on stderr; the doctor exits FINDINGS_REMAIN with its report on stdout
        if ran.returncode in (OK, ERROR, FINDINGS_REMAIN) and out.strip().startswith("{"):
            try:
                data = loads_strict(out)
            except ValueError:
                data = None
            if isinstance(data, dict):
                return data
        reason = strip_controls(failure_reason(ran.returncode, err, self.project))
        found = error_line(err)
        kind = found[1] if found is not None and ran.returncode == ERROR else kinds.ERROR
        raise (PlanChangedError if kind == kinds.PLAN_CHANGED else ActionError)(reason, kind)

    # -- actions ----------------------------------------------------------------------------
    # A dry run's JSON carries `plan_fingerprint`; passing it back as `expect` applies that plan or nothing
    # (PlanChangedError when the files changed in between).
    @staticmethod
    def _expect(expect: str | None) -> list[str]:
        return ["--expect-plan", expect] if expect else []

    def clear(self, mode: str, scope: str | None, *, all_sessions: bool = False, dry_run: bool = False,
              expect: str | None = None) -> dict[str, Any]:
        """Clear `mode` in `scope` ("root" or a session id), or everywhere."""
        args = ["state", "clear", "--mode", mode]
        if all_sessions:
            args.append("--all-sessions")
        elif scope in (None, "root"):
            args.append("--in-root")
        else:
            args += ["--session-id", scope]
        return self.run(args + (["--dry-run"] if dry_run else self._expect(expect)))

    def undo(self, entry: str | None = None, *, dry_run: bool = False, expect: str | None = None) -> dict[str, Any]:
        return self.run(["undo", *([entry] if entry else []), *(["--dry-run"] if dry_run else self._expect(expect))])

    def redo(self, entry: str | None = None, *, dry_run: bool = False, expect: str | None = None) -> dict[str, Any]:
        return self.run(["redo", *([entry] if entry else []), *(["--dry-run"] if dry_run else self._expect(expect))])

    def override(self, task: str, to: str, reason: str, *, dry_run: bool = False, expect: str | None = None
                 ) -> dict[str, Any]:
        return self.run(["task", "override", task, "--to", to, "--reason", reason,
                         *(["--dry-run"] if dry_run else self._expect(expect))])

    def doctor(self, *, fix: bool = False, only: tuple[str, ...] = (), expect: tuple[str, ...] = ()
               ) -> dict[str, Any]:
        """The doctor's report; with `fix`, the repairs of `only`, applied only if their plans still have the
        fingerprints in `expect` (when given)."""
        args = ["doctor"] + (["--fix"] if fix else [])
        for fid in only:
            args += ["--only", fid]
        for fp in expect if fix else ():
            args += ["--expect-plan", fp]
        return self.run(args)

    def journal(self, limit: int = 20) -> dict[str, Any]:
        return self.run(["journal", "--limit", str(limit)])
