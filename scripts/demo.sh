#!/usr/bin/env bash
# The one demo command: make a venv, install rcs-tui, open the console on a live demo workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh ""
exec "$VENV/bin/rcs-tui" demo "$@"
