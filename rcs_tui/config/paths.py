"""Where the configuration file is, and a cheap read of the one key the one-shot HUD line needs.

Kept free of pydantic so `hud --once` (run by status lines several times a second) stays fast.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing and pathlib stay out of the one-shot HUD line's imports
if TYPE_CHECKING:
    from pathlib import Path

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


def quick_preset() -> str | None:
    """The file's `hud_preset`, read with tomllib only.

    None when there is no file or no such key; ValueError when the file or the value is bad, or when the
    file sets any other key (an rp1 database, a theme...), so the caller hands over to the validating
    path, which reports a bad file and applies a good one.
    """
    try:
        raw = read_config_bytes(config_file())
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(str(exc)) from exc
    import tomllib  # only when there is a file to parse

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    others = set(data) - {"hud_preset"}
    if others:
        raise ValueError(f"sets {', '.join(sorted(others))}")
    value = data.get("hud_preset")
    if value is not None and value not in PRESETS:
        raise ValueError(f"hud_preset {value!r}")
    return value
