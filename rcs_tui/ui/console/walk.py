"""The rows that need you across the console's views, in the order n / N walk them, and the next or previous
one from where the cursor is.

The order is the views' own, left to right as their tabs are numbered (the scopes view's pointer and members,
then the team view's workers, then the rp1 view's runs), and within a view top to bottom as its table shows
them: n then moves the way the operator reads the screen, and a view is finished before the next begins (an
order by urgency would jump between views on every key). A row that needs you but is not in its table (a
filter hides it, the feed has not been read yet) comes after the rows shown, in the verdicts' order. Every
entry comes from the verdicts already judged (`Needs`); an entry acknowledged in its present state is passed
by. A scope listed as one row (past 30 sessions its members are not rows) stands for its first member that needs
you: going there opens it. Pure: the caller hands in each table's keys.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from rcs_tui.ui.console.needs import Needs

SCOPE_ROW = "scope:"  # a scope's own row in the scopes view is `scope:<session id>` (`scope:` for root)
RUN_PREFIX = "rp1/"  # a run's entry is `rp1/<run id>`; its row in the rp1 view is keyed by the run id
AFTER = 1 << 30  # a place after every row of a view (its other table has the focus)


@dataclass(frozen=True)
class Stop:
    """One row that needs you: the view (tab) holding it, its key in that view's table, its entry, and its place
    in the walk (the view's position among the tabs, the row's in the view)."""

    view: str
    key: str
    item: str
    place: tuple[int, int]


def run_item(run_id: str) -> str:
    return RUN_PREFIX + run_id


def in_table_order(keys: Sequence[str], shown: Sequence[str]) -> list[tuple[int, str]]:
    """`keys` with their row index in `shown` (the table's keys, top to bottom); those not shown after them,
    in their own order."""
    at = {k: i for i, k in enumerate(shown)}
    placed = sorted((at[k], k) for k in keys if k in at)
    rest = [k for k in keys if k not in at]
    return placed + [(len(shown) + i, k) for i, k in enumerate(rest)]


def stops(needs: Needs, tabs: Sequence[str], reach: Collection[str], scope_keys: Sequence[str],
          row_item: Callable[[str | None], str | None], workers: Sequence[str], worker_keys: Sequence[str],
          run_keys: Sequence[str]) -> list[Stop]:
    """Every row that needs you and is not acknowledged in its present state, in walking order.

    `tabs`: the views in tab order; `reach`: the ones whose rows can be selected now (the others are built
    after the first frame); `scope_keys`: the scopes table's keys (`row_item` names each row's entry);
    `workers`: every worker's entry (`team/worker`) in the team view's order, `worker_keys` the ones its table
    shows; `run_keys`: the run ids the rp1 view's table shows (the runs needing you come from the verdicts)."""
    out: list[Stop] = []
    if "scopes" in reach:
        view = tabs.index("scopes")
        items = [row_item(key) for key in scope_keys]
        rows = set(items)
        for i, (key, item) in enumerate(zip(scope_keys, items, strict=True)):
            if item is not None and needs.open(item):
                out.append(Stop("scopes", key, item, (view, i)))
            elif key.startswith(SCOPE_ROW) and key != SCOPE_ROW:  # a scope's own row
                inside = f"{key[len(SCOPE_ROW):]}/"
                first = next((v.item for v in needs.verdicts if v.item.startswith(inside) and v.item not in rows
                              and needs.open(v.item)), None)
                if first is not None:  # listed as one row: its first member that needs you, reached by opening it
                    out.append(Stop("scopes", key, first, (view, i)))
    if "team" in reach:
        view = tabs.index("team")
        out += [Stop("team", key, key, (view, i))
                for i, key in in_table_order([w for w in workers if needs.open(w)], worker_keys)]
    if "rp1" in reach:
        view = tabs.index("rp1")
        runs = list(dict.fromkeys(v.item[len(RUN_PREFIX):] for v in needs.verdicts
                                  if v.item.startswith(RUN_PREFIX) and needs.open(v.item)))
        out += [Stop("rp1", key, run_item(key), (view, i)) for i, key in in_table_order(runs, run_keys)]
    return sorted(out, key=lambda s: s.place)


def next_stop(walk: Sequence[Stop], here: tuple[int, int], step: int) -> Stop | None:
    """The stop after (`step` 1) or before (-1) the place `here`, wrapping round; None when nothing needs you."""
    if not walk:
        return None
    if step > 0:
        return next((s for s in walk if s.place > here), walk[0])
    return next((s for s in reversed(walk) if s.place < here), walk[-1])
