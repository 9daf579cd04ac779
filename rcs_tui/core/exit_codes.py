"""The exit statuses rcs-tui's commands end with, by name: other processes (the fleet, scripts) read them."""

from __future__ import annotations

OK = 0
ERROR = 1  # a refusal or an error, with `{"error": ...}` on stderr
USAGE = 2  # the command line itself was wrong
REJECTED = 1  # `rp1 check`: rp1 would reject the emit (the answer is on stdout, as when accepted)
FINDINGS_REMAIN = 3  # `doctor`: some finding (beyond informational ones) is still there
