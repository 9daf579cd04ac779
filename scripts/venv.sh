# Sourced by scripts/test.sh and scripts/demo.sh: make (or reuse) .venv and install rcs-tui into it.
# Usage: . scripts/venv.sh [EXTRAS]   (". scripts/venv.sh test" installs '.[test]')
# The (editable) install runs only when pyproject.toml changed since the last one or other extras are asked
# for (none asked = any install will do): a stamp in the venv records both. Its output goes to a log shown
# only when the install fails; while it runs, a line on stderr says so and shows progress.
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
    # pip runs in the background, its output in the log; meanwhile one line on stderr says what is happening
    # and moves: pip's latest step on a terminal, a dot every two seconds elsewhere (a CI log).
    echo "rcs-tui: installing rcs-tui into $VENV (first run or pyproject.toml changed; takes about 20 s)…" >&2
    { "$VENV/bin/python" -m pip install --upgrade pip \
      && "$VENV/bin/python" -m pip install -e ".${1:+[$1]}" --config-settings editable_mode=compat; } \
        >"$VENV/.rcs-tui-install.log" 2>&1 &
    _rcs_pip=$!
    trap 'kill "$_rcs_pip" 2>/dev/null; exit 130' INT TERM
    _rcs_ticks=0
    while kill -0 "$_rcs_pip" 2>/dev/null; do
        if [ -t 2 ]; then
            _rcs_last="$(tail -n 1 "$VENV/.rcs-tui-install.log" 2>/dev/null | tr -d '\r' | cut -c1-$(( ${COLUMNS:-80} - 4 )))"
            printf '\r\033[K  %s' "$_rcs_last" >&2
        elif [ $(( _rcs_ticks % 4 )) -eq 0 ]; then
            printf '.' >&2
        fi
        _rcs_ticks=$(( _rcs_ticks + 1 ))
        sleep 0.5
    done
    if [ -t 2 ]; then printf '\r\033[K' >&2; else echo >&2; fi
    _rcs_ok=0
    wait "$_rcs_pip" || _rcs_ok=$?
    trap - INT TERM
    if [ "$_rcs_ok" -ne 0 ]; then
        cat "$VENV/.rcs-tui-install.log" >&2
        echo "rcs-tui: installing into $VENV failed (log above)" >&2
        return 1 2>/dev/null || exit 1
    fi
    echo "rcs-tui: installed into $VENV ($(( _rcs_ticks / 2 )) s)" >&2
    echo "$_rcs_stamp" >"$VENV/.rcs-tui-installed"
fi
"$VENV/bin/python" -m compileall -q rcs_tui >/dev/null 2>&1 || true
unset _rcs_stamp _rcs_have _rcs_pip _rcs_ticks _rcs_last _rcs_ok
