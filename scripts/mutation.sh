#!/usr/bin/env bash
# Mutation testing of the rules: mutmut changes rcs_tui/core, the rp1 status derivation and the write path
# (the transaction, state operations, journal, undo/redo, the file layer, the doctor's repairs) one small edit
# at a time and runs the in-process tests that reach the changed function (config in pyproject.toml
# [tool.mutmut]).
# Usage: scripts/mutation.sh [MODULE...]   (a core module by name, or a dotted path under rcs_tui such as
#        rp1.projection; default: every module of rcs_tui/core, then rp1.projection and the write path's
#        modules listed below)
# Env: MUTATION_JOBS (parallel mutants, default 2), MUTATION_TIMEOUT (seconds per module, default 1800),
#      RCS_TUI_MUTATION_INPROCESS=1 (judge by the in-process tests alone: the tests' `rcs-tui` subprocesses are
#      skipped, which makes the write path's modules several times faster to run).
# Runs under `nice -n 10`; prints a per-module score table (scripts/mutation_score.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh test,mutation
if [ "$#" -eq 0 ]; then
  set -- $(ls rcs_tui/core/*.py | xargs -n1 basename | sed 's/\.py$//' | grep -v '^__init__$') rp1.projection rp1.status_read \
    state.journal_format state.redo files.inputs state.journal state.ops state.txn state.plans files.io \
    files.fsafe project.doctor
fi
mkdir -p mutants
for module in "$@"; do
  case "$module" in *.*) dotted="rcs_tui.$module" ;; *) dotted="rcs_tui.core.$module" ;; esac
  echo "== $dotted"
  nice -n 10 timeout "${MUTATION_TIMEOUT:-1800}" "$VENV/bin/mutmut" run --max-children "${MUTATION_JOBS:-2}" \
    "$dotted.*" >"mutants/run-$module.log" 2>&1 || echo "mutmut exited $? for $module (log: mutants/run-$module.log)"
done
"$VENV/bin/python" scripts/mutation_score.py "$@"
