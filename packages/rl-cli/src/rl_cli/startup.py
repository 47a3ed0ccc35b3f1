"""Python's cyclic garbage collector during an `rl` process's start-up.

Start-up (importing JAX, Equinox, the environment library; tracing and lowering the programs)
creates hundreds of thousands of objects that live until the process ends, and the collector's
full passes over them cost about 0.3 s of a quickstart `rl run` for little garbage. The `rl`
console script (`rl_cli.main.entry`) therefore pauses the collector before the command runs, and
a training command resumes it once its programs are compiled (`train_members`, `rl evolve`):
the objects alive then, start-up's leftover garbage among them (about 115,000 objects for PPO
on CartPole; the process's peak memory stayed at 360 MB), are frozen out of later collections
(`gc.freeze`), and collection goes on as usual for everything the run creates afterwards.
Other commands (eval, render, plot, ...) are short and end with the collector paused. `main()`
called in-process (the tests, scripts) leaves the collector alone: `resume_gc` does nothing
unless `pause_gc` paused it."""

from __future__ import annotations

import gc

_paused = False


def pause_gc() -> None:
    """Pauses the cyclic garbage collector (when it runs) until `resume_gc`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_gc() -> None:
    """Freezes the objects alive now out of future collections and resumes the collector, if
    `pause_gc` paused it; otherwise nothing."""
    global _paused
    if _paused:
        gc.freeze()
        gc.enable()
        _paused = False
