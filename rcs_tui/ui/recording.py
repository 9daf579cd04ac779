"""Run the project's flight recorder beside a live face (console, HUD): one Textual worker that waits for
the recorder lock and, once it holds it, records every change (`project.recorder.run_recorder`).

It starts `RECORD_DELAY_S` after the face, so the first frame and the face's own first loads never wait
for it, and it ends with the app (the kernel drops the lock with the process, however it ends).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.dom import DOMNode
from textual.worker import Worker

RECORD_DELAY_S = 3.0


def start_recording(node: DOMNode, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                    actor: str = "", delay: float = RECORD_DELAY_S) -> Worker[None]:
    """Record `root` from this app for as long as it runs (standing by while another rcs-tui records)."""
    from rcs_tui.project.recorder import run_recorder

    async def run() -> None:
        await asyncio.sleep(delay)
        try:
            await run_recorder(root, session_id=session_id, rp1_db=rp1_db, actor=actor)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the history is a by-product: it never takes the face down
            return

    return node.run_worker(run(), name="rcs-recorder", group="rcs-recorder", exclusive=True, exit_on_error=False)
