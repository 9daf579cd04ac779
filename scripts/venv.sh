# Sourced by scripts/test.sh and scripts/demo.sh: make (or reuse) .venv and install rcs-tui into it.
# Usage: . scripts/venv.sh [EXTRAS]   (". scripts/venv.sh test" installs '.[test]')
VENV="${RCS_TUI_VENV:-.venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install -q -e ".${1:+[$1]}"
