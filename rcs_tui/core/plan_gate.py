"""The Forge Blueprint-First Gate: forge may run only once a PRD and a test spec exist as plans.

Pure over the names of the files in `.rcs/plans/`; reading that directory is the caller's business.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

GATE = "**Forge Blueprint-First Gate:**"
PLAN_PATTERNS = ("prd-*.md", "test-spec-*.md")


def missing_plans(names: tuple[str, ...]) -> tuple[str, ...]:
    """Which of `prd-*.md` / `test-spec-*.md` no plan file name matches."""
    return tuple(p for p in PLAN_PATTERNS if not any(fnmatchcase(n, p) for n in names))


def gate_line(missing: tuple[str, ...]) -> str:
    """The overlay's gate line: unlocked, or blocked naming what is missing."""
    if not missing:
        return f"{GATE} UNLOCKED"
    return f"{GATE} BLOCKED (missing {', '.join(missing)} in .rcs/plans/)"
