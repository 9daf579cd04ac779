"""What counts as a usable number in a state file: anything else is an invalid value, shown as unknown.

Files are untrusted: `iteration: 10**320` is valid JSON but no count (it cannot even become a float), and
`true` is not 1. One rule for every counter and measure, so no face divides, formats or compares a
value that would overflow.
"""

from __future__ import annotations

MAX_EXACT = 2**53  # the largest integer every JSON reader (and a float) holds exactly


def count(value: object) -> int | None:
    """A non-negative whole number no larger than `MAX_EXACT`, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_EXACT else None


def number(value: object) -> float | None:
    """A finite number within ±`MAX_EXACT`, as a float, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or not -MAX_EXACT <= value <= MAX_EXACT:  # NaN, or too large to be a measure
        return None
    return float(value)
