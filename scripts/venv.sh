# Sourced by scripts/test.sh and scripts/demo.sh: make (or reuse) .venv and install rcs-tui into it.
# Usage: . scripts/venv.sh [EXTRAS]   (". scripts/venv.sh test" installs '.[test]')
# The (editable) install runs only when pyproject.toml changed since the last one or other extras are asked
# for (none asked = any install will do): a stamp in the venv records both. Its output goes to a log shown
# only when the install fails.
# The install is editable in "compat" mode: a plain path entry, so no import hook is loaded at every Python
# start (a status line starts rcs-tui many times a second). Bytecode is compiled after every sourcing (cheap
# when current), because an environment with PYTHONDONTWRITEBYTECODE would otherwise compile every module of
# every command from source, every time.
VENV="${RCS_TUI_VENV:-.venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
_rcs_stamp="$("$VENV/bin/python" -c 'import hashlib,sys; print(hashlib.sha256(open("pyproject.toml","rb").read()).hexdigest() + "-compat", sys.argv[1])' "${1:-}")"
_rcs_have="$(cat "$VENV/.rcs-tui-installed" 2>/dev/null || true)"
if [ ! -x "$VENV/bin/rcs-tui" ] || { [ "$_rcs_have" != "$_rcs_stamp" ] \
        && { [ -n "${1:-}" ] || [ "${_rcs_have%% *} " != "$_rcs_stamp" ]; }; }; then
    if ! { "$VENV/bin/python" -m pip install -q --upgrade pip \
           && "$VENV/bin/python" -m pip install -q -e ".${1:+[$1]}" --config-settings editable_mode=compat; } >"$VENV/.rcs-tui-install.log" 2>&1; then
        cat "$VENV/.rcs-tui-install.log" >&2
        echo "rcs-tui: installing into $VENV failed (log above)" >&2
        return 1 2>/dev/null || exit 1
    fi
    echo "$_rcs_stamp" >"$VENV/.rcs-tui-installed"
fi
"$VENV/bin/python" -m compileall -q rcs_tui >/dev/null 2>&1 || true
unset _rcs_stamp _rcs_have
