#!/usr/bin/env bash
# The one demo command: make a venv, install rcs-tui, open the console on a live demo workspace.
# `bash scripts/demo.sh --link` instead puts rcs-tui on PATH (a link in ~/.local/bin) for the README's recipes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh ""
exe="$(cd "$VENV/bin" && pwd)/rcs-tui"

# Where the README's recipes (tmux status line, agent statusline, fleet) will find rcs-tui, if anywhere.
path_hint() {
    local found
    if found="$(command -v rcs-tui 2>/dev/null)"; then
        [ "$(readlink -f "$found")" = "$(readlink -f "$exe")" ] \
            || echo "note: \`rcs-tui\` on your PATH is $found, not this checkout's $exe" >&2
        return 0
    fi
    cat >&2 <<HINT
rcs-tui is installed in $exe, which is not on your PATH; the README's recipes call \`rcs-tui\`. Either:
  bash scripts/demo.sh --link  # a link in ~/.local/bin: new shells, tmux and agents find it there
  source $(dirname "$exe")/activate  # this shell only (not a tmux server or agent started elsewhere)
  pipx install $(pwd)  # an install of its own
HINT
}

if [ "${1:-}" = "--link" ]; then
    mkdir -p "$HOME/.local/bin"
    ln -sfn "$exe" "$HOME/.local/bin/rcs-tui"
    echo "linked $HOME/.local/bin/rcs-tui -> $exe"
    case ":$PATH:" in
        *":$HOME/.local/bin:"*) echo "~/.local/bin is on your PATH: \`rcs-tui\` works in new shells" ;;
        *) echo "~/.local/bin is not on your PATH yet: add  export PATH=\"\$HOME/.local/bin:\$PATH\"  to your shell's rc file" ;;
    esac
    exit 0
fi

status=0
"$exe" demo "$@" || status=$?
path_hint  # after the demo, so it is the last thing on the screen
exit "$status"
