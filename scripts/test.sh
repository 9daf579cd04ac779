#!/usr/bin/env bash
# The one test command: make a venv, install rcs-tui with its test extras, lint, run the whole suite,
# long `slow` variants included (add -m "not slow" to leave them out).
set -euo pipefail
cd "$(dirname "$0")/.."
# The fleet's ssh tests run a real OpenSSH server on 127.0.0.1, the kill-at-every-syscall tests drive
# strace, the tmux-escaping tests a real tmux server, the `serve` tests the system Chromium (Playwright
# drives it; no browser is ever downloaded): install what is missing, in one apt-get run (CI runs as root).
# Without them those tests skip, saying why.
missing=()
if [ ! -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null 2>&1; then missing+=(openssh-server openssh-client); fi
if ! command -v strace >/dev/null 2>&1; then missing+=(strace); fi
if ! command -v tmux >/dev/null 2>&1; then missing+=(tmux); fi
if [ ! -x /usr/bin/chromium ]; then missing+=(chromium); fi
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    (apt-get update -qq && apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1 \
      || echo "note: could not install ${missing[*]}" >&2
  else
    echo "note: ${missing[*]} missing and not root: the tests that need them will be skipped" >&2
  fi
fi
. scripts/venv.sh test
"$VENV/bin/ruff" check rcs_tui tests benchmarks scripts
# the layers contract (pyproject.toml [tool.importlinter]): no import runs from a lower layer to a higher one
"$VENV/bin/lint-imports" --no-cache | tail -n 6
# the type check (pyproject.toml [tool.mypy]) on the whole package
"$VENV/bin/mypy" rcs_tui
set +e
# Two workers (pytest-xdist; the machines have two cores), idle ones taking queued tests from busy ones.
"$VENV/bin/python" -m pytest --run-slow -n "${RCS_TUI_TEST_WORKERS:-2}" --dist worksteal "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi
exit "$rc"
