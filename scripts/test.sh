#!/usr/bin/env bash
# The one test command: make a venv, install rcs-tui with its test extras, lint, run the whole suite,
# long `slow` variants included (add -m "not slow" to leave them out).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh test
"$VENV/bin/ruff" check rcs_tui tests benchmarks scripts
set +e
"$VENV/bin/python" -m pytest --run-slow "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi
exit "$rc"
