"""The secret a browser must present: made at start (or set in the configuration), kept for the owner.

A fresh token is made at every start unless `[serve] token` in the configuration file sets one, so a URL
that leaked stops working once the server restarts. It is written, readable by its owner only, to
rcs-tui's own state directory (`$XDG_STATE_HOME/rcs-tui/serve-token`, else `~/.local/state/…`) so the
owner can find it again without scrolling back. Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
import os
import secrets

from rcs_tui.files.cache import state_dir, write_own

TOKEN_BYTES = 32  # 256 bits: guessing is out of reach, so wrong tries need no rate limit


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)




def token_file() -> str:
    return os.path.join(state_dir(), "serve-token")


def store_token(token: str) -> str | None:
    """Write the token, mode 0600 in a 0700 directory we own; its path, or None when it could not be written."""
    path = token_file()
    return path if write_own(path, (token + "\n").encode("ascii")) else None


def same_token(given: str | None, expected: str) -> bool:
    """Whether `given` is the token, compared in time that does not depend on where they differ."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("ascii"))
