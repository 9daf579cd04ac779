"""`Frozen`: the base of the small immutable value classes the status-line commands build.

Those commands (`hud --once`, `rp1 runs`) are spawned again every few hundred milliseconds by a status
line, and `dataclasses` costs them ~30 ms a start: the module imports `inspect`, and every class it
decorates has its methods generated and compiled at import. A subclass here writes its own `__slots__`
and `__init__` (setting fields with `set_field`) and names its compared fields in `_compared`;
this base gives it what a frozen dataclass would: equality over those fields between instances of the
very same class, a hash over them (or over `_hashed`), a `Name(field=value, ...)` repr showing them,
assignment and deletion refused, and copying and pickling through the constructor.
"""

from __future__ import annotations

from typing import Any

# How an `__init__` sets a field of its own frozen instance (plain assignment is refused).
set_field = object.__setattr__


class Frozen:
    """Immutable value object: compared, hashed and shown by the fields named in `_compared`."""

    __slots__ = ()
    _compared: tuple[str, ...] = ()
    _hashed: tuple[str, ...] | None = None  # None: the compared fields

    def _values(self, names: tuple[str, ...]) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in names])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values(self._compared) == other._values(self._compared)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values(self._compared if self._hashed is None else self._hashed))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._compared)
        return f"{self.__class__.__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {self.__class__.__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {self.__class__.__name__}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Copies and pickles are rebuilt by the constructor, which takes every slot in order."""
        return self.__class__, self._values(self.__slots__)
