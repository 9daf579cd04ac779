"""Per-module mutation score of rcs_tui/core, the rp1 derivation and the write path from mutmut's results in mutants/.

Score = killed / (mutants - known equivalents). A timeout counts as killed (the change made the tests hang);
a mutant not run yet (`unrun`, e.g. a run cut short by its time bound) counts as not killed.
Known equivalent mutants are listed in scripts/mutation_equivalents.txt, one `name  reason` a line; a listed
mutant that is now killed or gone is reported so the list stays true. Exit 1 when a module scores under --min.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "scripts" / "mutation_equivalents.txt"
# The write path and the file layer, after the core and rp1.projection in the default table.
WRITE_PATH = ("state.journal_format", "state.redo", "files.inputs", "state.journal", "state.ops", "state.txn",
              "state.plans", "files.io", "files.fsafe", "project.doctor")


def equivalents() -> dict[str, str]:
    """Known equivalent mutants: name → why no test can tell them from the original."""
    out: dict[str, str] = {}
    for line in EQUIVALENTS.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, why = line.partition(" ")
            out[name] = why.strip()
    return out


def dotted(module: str) -> str:
    """`policy` -> `core.policy`; a dotted path under rcs_tui (`rp1.projection`) stays as it is."""
    return module if "." in module else f"core.{module}"


def statuses(module: str) -> dict[str, str]:
    meta = ROOT / "mutants" / "rcs_tui" / Path(*dotted(module).split(".")).with_suffix(".py.meta")
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return {name: status_by_exit_code[code] for name, code in codes.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="core modules, or dotted paths under rcs_tui (default: all)")
    parser.add_argument("--min", type=float, default=90.0, help="lowest acceptable score in percent")
    parser.add_argument("--survivors", action="store_true",
                        help="list surviving mutants that are not known equivalents")
    args = parser.parse_args(argv)
    modules = args.modules or [*sorted(p.stem for p in (ROOT / "rcs_tui" / "core").glob("*.py")
                                       if p.stem != "__init__"), "rp1.projection", *WRITE_PATH]
    known = equivalents()
    worst = 100.0
    print(f"{'module':<22}{'mutants':>8}{'killed':>8}{'survived':>9}{'no tests':>9}{'unrun':>6}{'equiv':>6}"
          f"{'score':>8}")
    for module in modules:
        found = statuses(module)
        if not found:
            print(f"{module:<22} no results (run scripts/mutation.sh {module})")
            worst = 0.0
            continue
        count = Counter("killed" if s == "timeout" else s for s in found.values())
        equiv = [n for n in found if n in known]
        live_equiv = [n for n in equiv if found[n] != "killed"]
        denominator = len(found) - len(live_equiv)
        score = 100.0 * count["killed"] / denominator if denominator else 100.0
        worst = min(worst, score)
        print(f"{module:<22}{len(found):>8}{count['killed']:>8}{count['survived']:>9}{count['no tests']:>9}"
              f"{count['not checked']:>6}{len(live_equiv):>6}{score:>7.1f}%")
        for name in equiv:
            if found[name] == "killed":
                print(f"  listed as equivalent but killed: {name}")
        if args.survivors:
            for name, status in sorted(found.items()):
                if status not in ("killed", "timeout", "not checked") and name not in known:
                    print(f"  {status}: {name}")
    for module in modules:
        present = statuses(module)
        for name in known:
            if name.startswith(f"rcs_tui.{dotted(module)}.") and present and name not in present:
                print(f"  listed as equivalent but no longer a mutant: {name}")
    return 0 if worst >= args.min else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
