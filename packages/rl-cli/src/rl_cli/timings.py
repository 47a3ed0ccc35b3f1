"""Opt-in phase timings of one `rl` process: with `RL_TIMINGS=1` in the environment, `rl run`
prints on stderr, after its summary, how long each phase of the process took (wall seconds), one
`rl timings: <phase> <seconds>` line each, then their total.

The phases are the intervals between consecutive `mark(phase)` calls, each named by the mark that
ends it (intervals of the same name add up: training between checkpoints, say); the first starts
when the process did (from /proc on Linux; elsewhere when this module
was imported, the first thing `rl` imports). What happens after the last mark (the interpreter
shutting down) and before the process (a `uv run` launcher) is not seen here: `tools/
bench_startup.py` gets it as the whole process's wall time minus the total.

Nothing is recorded unless the variable is set (a mark is then one list append)."""

from __future__ import annotations

import os
import sys
import time

ENV_VAR = "RL_TIMINGS"


def _seconds_since_process_start() -> float:
    """Wall seconds since this process started (Linux /proc, 10 ms resolution), or 0 elsewhere."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


ENABLED = os.environ.get(ENV_VAR, "").lower() not in {"", "0", "false", "no", "off"}
_START = time.perf_counter() - (_seconds_since_process_start() if ENABLED else 0.0)
_marks: list[tuple[str, float]] = []
if ENABLED:  # `rl` imports click, then this module
    _marks.append(("python start-up, import click", time.perf_counter()))


def mark(phase: str) -> None:
    """Ends the phase called `phase` now (it began at the previous mark, or at process start)."""
    if ENABLED:
        _marks.append((phase, time.perf_counter()))


def phases() -> list[tuple[str, float]]:
    """`(phase, seconds)` in the order of each phase's first mark, as marked so far."""
    out: dict[str, float] = {}
    last = _START
    for name, t in _marks:
        out[name] = out.get(name, 0.0) + t - last
        last = t
    return list(out.items())


def report() -> None:
    """Prints the phases on stderr (when enabled)."""
    if not ENABLED:
        return
    rows = phases()
    width = max((len(n) for n, _ in rows), default=0)
    for name, s in rows + [("total", sum(s for _, s in rows))]:
        sys.stderr.write(f"rl timings: {name:<{width}} {s:8.3f}\n")
    sys.stderr.flush()
