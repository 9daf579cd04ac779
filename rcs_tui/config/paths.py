"""Where the configuration file is, and a cheap read of the keys the quick commands (the one-shot HUD line,
`rp1 runs`) take from it.

Kept free of pydantic so `hud --once` (run by status lines several times a second) stays fast.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing and pathlib stay out of the one-shot HUD line's imports
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

CONFIG_ENV = "RCS_TUI_CONFIG"
PRESETS = ("minimal", "focused", "full")


def config_file(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """`$RCS_TUI_CONFIG`, else `$XDG_CONFIG_HOME/rcs-tui/config.toml`, else `~/.config/rcs-tui/config.toml`."""
    env = os.environ if environ is None else environ
    explicit = env.get(CONFIG_ENV)
    if explicit:
        return os.path.expanduser(explicit)
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(os.path.expanduser(base), "rcs-tui", "config.toml")


def config_path(environ: dict[str, str] | os._Environ[str] | None = None) -> Path:
    """`config_file` as a Path, for the validating reader and `locate`."""
    from pathlib import Path

    return Path(config_file(environ))


def config_absent(path: str | os.PathLike[str]) -> bool:
    """Whether there is no configuration file at `path`: only "no such file" counts as absent, so a path
    that cannot be looked at (a file where a directory should be, no permission) is still read, and the
    reader reports why it cannot be used instead of defaults being used silently."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


MAX_CONFIG_BYTES = 1024 * 1024


def read_config_bytes(path: str | os.PathLike[str]) -> bytes:
    """The config file's bytes: a regular file (symlinks to one are fine, dotfile managers use them), opened
    non-blocking and read to at most MAX_CONFIG_BYTES, so a FIFO or /dev/zero can neither hang nor
    exhaust memory. FileNotFoundError when absent; OSError (with a reason) otherwise."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = {"p": "a FIFO", "c": "a device", "b": "a device", "s": "a socket", "d": "a directory"}.get(
                stat.filemode(st.st_mode)[0], "not a regular file")
            raise OSError(f"not a regular file ({kind}); not read")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, MAX_CONFIG_BYTES + 1 - total):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_CONFIG_BYTES:
                raise OSError(f"larger than {MAX_CONFIG_BYTES} bytes; not read")
        return b"".join(chunks)
    finally:
        os.close(fd)


# Environment variables that name a key; they beat the file and lose to a command-line flag.
ENV_KEYS: dict[str, str] = {"rp1_db": "RP1_DB", "rp1_plugin_roots": "RP1_PLUGIN_ROOTS"}
# What the quick commands (`hud --once`, `rp1 runs`) take from the file; every other key is for the console,
# the fleet or the alerts.
QUICK_KEYS = ("hud_preset", "rp1_db", "rp1_plugin_roots")
CHECKED_NAME = "config-checked.json"


def file_rp1_paths(values: dict[str, Any], environ: dict[str, str] | os._Environ[str] | None = None
                   ) -> tuple[str | None, list[str] | None]:
    """The rp1 database and plugin roots the file sets (`values`), `~` expanded, for the commands to hand to
    the readers as arguments; None for each the file does not set or the environment names (there the
    environment wins over the file, and the readers take it from there; a flag still wins over both)."""
    env = os.environ if environ is None else environ
    db = values.get("rp1_db")
    roots = values.get("rp1_plugin_roots")
    return (os.path.expanduser(str(db)) if db and not env.get(ENV_KEYS["rp1_db"]) else None,
            [os.path.expanduser(str(p)) for p in roots]
            if roots is not None and not env.get(ENV_KEYS["rp1_plugin_roots"]) else None)


def _checked_stamp(text: str) -> list[Any]:
    """What a checked file's record must match: rcs-tui's version, its code as installed (changed rules may
    reject what they accepted) and the file's whole text."""
    from rcs_tui import __version__
    from rcs_tui.files.cache import code_stamp

    return [__version__, code_stamp(), text]


def parse_toml(raw: bytes) -> dict[str, Any]:
    """The file's TOML as a table; ValueError saying why not, in words, for anything the parser cannot take
    (not UTF-8, bad TOML, nesting deeper than it can follow, a number too long to read): never a traceback."""
    import sys
    import tomllib  # only when there is a file to parse

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"invalid TOML: {exc}") from None
    except RecursionError:
        raise ValueError("invalid TOML: arrays or tables nested deeper than can be read") from None
    except ValueError as exc:  # an integer past the interpreter's digit limit
        raise ValueError("invalid TOML: a number too long to read (more than "
                         f"{sys.get_int_max_str_digits()} digits)" if "digits" in str(exc)
                         else f"invalid TOML: a value cannot be read ({str(exc)[:80]})") from None


def remember_checked(raw: bytes, values: dict[str, Any]) -> None:
    """Record that the file with these bytes passed the full check, with the values of the `QUICK_KEYS` it
    sets, so the quick commands can apply it without the validating path. Kept in rcs-tui's own cache
    directory; a record that cannot be written is only a slower next line."""
    import json

    from rcs_tui.files.cache import cache_dir, read_own, write_own

    stamp = _checked_stamp(raw.decode("utf-8"))
    path = os.path.join(cache_dir(), CHECKED_NAME)
    data = json.dumps({"stamp": stamp, "values": values}).encode()
    if read_own(path) != data:
        write_own(path, data)


def _checked_values(raw: bytes) -> dict[str, Any] | None:
    """The values recorded for a file with exactly these bytes (None: no such record, or not one to trust)."""
    import json

    from rcs_tui.files.cache import cache_dir, read_own

    data = read_own(os.path.join(cache_dir(), CHECKED_NAME))
    if data is None:
        return None
    try:
        doc = json.loads(data)
        stamp = _checked_stamp(raw.decode("utf-8"))
        if doc["stamp"] != stamp:
            return None
        values = doc["values"]
    except (ValueError, TypeError, KeyError, OSError):
        return None
    if not isinstance(values, dict) or not set(values) <= set(QUICK_KEYS):
        return None
    roots = values.get("rp1_plugin_roots")
    if (values.get("hud_preset") not in (None, *PRESETS) or not isinstance(values.get("rp1_db", ""), (str, type(None)))
            or roots is not None and not (isinstance(roots, list) and all(isinstance(r, str) for r in roots))):
        return None
    return values


def quick_settings() -> dict[str, Any]:
    """The `QUICK_KEYS` the configuration file sets, read without the validating path.

    Empty when there is no file. A file that sets only `hud_preset` is read with tomllib alone. Any other
    file is taken only when the full check recorded it (`remember_checked`) with these very bytes. Else
    ValueError: the caller hands over to the validating path, which reports a bad file, applies a good
    one and records it for the next call.
    """
    try:
        raw = read_config_bytes(config_file())
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(str(exc)) from exc
    data = parse_toml(raw)
    if set(data) - {"hud_preset"}:
        checked = _checked_values(raw)
        if checked is None:
            raise ValueError("not checked yet")
        return checked
    value = data.get("hud_preset")
    if value is not None and value not in PRESETS:
        raise ValueError(f"hud_preset {value!r}")
    return {} if value is None else {"hud_preset": value}
