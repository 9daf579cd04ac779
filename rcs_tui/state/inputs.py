"""Validation of `state write` / `state clear` input with pydantic.

Known fields must have the types the runtime writes (a string "yes" is not `active: true`);
unknown fields are kept as they are, since mode files carry mode-specific extras.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError

from rcs_tui.core import error_kinds as kinds
from rcs_tui.state.txn import TxnError


class WriteInput(BaseModel):
    """`state write` input: the fields merged into a mode file."""

    model_config = ConfigDict(extra="allow")

    mode: StrictStr | None = None
    session_id: StrictStr | None = None
    active: StrictBool | None = None
    iteration: StrictInt | None = None
    max_iterations: StrictInt | None = None
    current_phase: StrictStr | None = None
    task_description: StrictStr | None = None
    started_at: StrictStr | None = None
    completed_at: StrictStr | None = None
    run_outcome: StrictStr | None = None
    lifecycle_outcome: StrictStr | None = None
    state: dict[str, Any] | None = None


class ClearInput(BaseModel):
    """`state clear` input: which member, in which scope, or across all sessions."""

    model_config = ConfigDict(extra="ignore")

    mode: StrictStr | None = None
    session_id: StrictStr | None = None
    all_sessions: StrictBool = False


def _message(where: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        got = err.get("input")
        shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
        parts.append(f"{where}.{field}: {err['msg'].lower()}, got {shown}")
    return "; ".join(parts)


def validate_write(data: dict[str, Any], where: str = "input") -> dict[str, Any]:
    """The input unchanged if its known fields are well typed; else TxnError naming each bad field."""
    try:
        WriteInput.model_validate(data)
    except ValidationError as exc:
        raise TxnError(_message(where, exc), kind=kinds.BAD_INPUT) from None
    return data


def validate_clear(data: dict[str, Any], where: str = "input") -> ClearInput:
    try:
        return ClearInput.model_validate(data)
    except ValidationError as exc:
        raise TxnError(_message(where, exc), kind=kinds.BAD_INPUT) from None
