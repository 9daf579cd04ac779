"""Counted nouns in user-facing text: `1 project`, `2 projects`, never `1 projects` or `project(s)`.

One helper, so every command, view and message counts the same way."""

from __future__ import annotations


def plural_of(noun: str) -> str:
    """The plural of a regular noun: -ies after a consonant + y, -es after s, x, ch or sh, else -s."""
    if len(noun) > 1 and noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, the noun in the plural (`many`, else the regular one) unless the count is exactly
    one: `0 runs`, `1 run`, `2 entries`."""
    return f"{count} {noun if count == 1 else (many or plural_of(noun))}"
