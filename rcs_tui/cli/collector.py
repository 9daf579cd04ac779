"""How a one-shot command runs the cyclic garbage collector."""

from __future__ import annotations

import gc

ONE_SHOT_THRESHOLDS = (50_000, 20, 20)


def one_shot() -> None:
    """For a command that reads the tree once, answers and exits (`snapshot --json`, `doctor`).

    What is loaded before it starts (modules, settings) is moved out of the collector's reach, and
    collections are spaced wider: a full read builds hundreds of thousands of acyclic objects (parsed
    documents, paths, records) that the default thresholds walked again and again, a quarter to a third
    of the command's CPU at 10 000 sessions, with nothing to find. Cycles are still collected, less
    often; objects are still freed the moment they are dropped. The same policy `fleet --once` uses.
    """
    gc.freeze()
    gc.set_threshold(*ONE_SHOT_THRESHOLDS)
