"""The exit statuses rcs-tui's commands end with, by name: other processes (the fleet, scripts) read them."""

from __future__ import annotations

OK = 0
ERROR = 1  # a refusal or an error, with `{"error": ...}` on stderr
USAGE = 2  # the command line itself was wrong
FINDINGS_REMAIN = 3  # `doctor`: some finding (beyond informational ones) is still there
