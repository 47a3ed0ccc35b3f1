"""JAX's persistent compilation cache, on by default for every `rl` command.

Compiling a training program takes seconds to minutes; with the cache a repeated run (same
program, same shapes) loads the executable from disk instead. Turn it off with
`--no-compile-cache` or `RL_COMPILE_CACHE=0`; move it with `RL_COMPILE_CACHE_DIR`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MIN_COMPILE_SECONDS = 0.1  # programs that compile faster are not cached (as fast to compile)


def rl_cache_dir() -> Path:
    """Where `rl` keeps what it can rebuild: `$XDG_CACHE_HOME/rl` (default `~/.cache/rl`)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rl"


def default_dir() -> Path:
    return Path(os.environ.get("RL_COMPILE_CACHE_DIR") or rl_cache_dir() / "jax")


def enabled_by_env() -> bool:
    return os.environ.get("RL_COMPILE_CACHE", "1").lower() not in {"0", "false", "no", "off"}


def enable(path: Path | None = None) -> Path | None:
    """Turns the cache on at `path` (default `default_dir()`), or, where that is not a
    directory this process can write (HOME read-only, the variable naming a file), says so once
    on stderr and leaves it off: the cache only saves time. Returns the directory, or None."""
    import jax

    path = Path(path or default_dir())
    try:
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied", str(path))
    except OSError as e:
        sys.stderr.write(f"rl: warning: the compilation cache at '{path}' is unusable "
                         f"({e.strerror}); running without it (set RL_COMPILE_CACHE_DIR to a "
                         "writable directory, or RL_COMPILE_CACHE=0)\n")
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    # Every program that takes a noticeable time to compile: at 1 s, the final greedy
    # evaluation's program (about 1 s to compile for CartPole) was cached or not depending on
    # the machine's load; loading it takes a few hundredths of a second.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
