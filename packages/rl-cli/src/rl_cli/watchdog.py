"""A watchdog for runs that stop making progress.

The training program runs as compiled chunks; after each chunk (and at each phase change) the
runner calls `beat(...)`. If no beat arrives for `timeout` seconds, the watchdog prints what the
run was doing and ends the process with exit code 3, instead of letting it hang silently
(a run blocked inside XLA cannot be interrupted from Python, hence `os._exit`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

from rl_cli.errors import EXIT_WATCHDOG


class Watchdog:
    def __init__(self, timeout: float, on_fire: Callable[[str], None] | None = None,
                 poll: float = 1.0):
        self.timeout = float(timeout)
        self.phase = "starting"
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._on_fire = on_fire or _exit
        self._poll = min(poll, max(0.05, self.timeout / 4))
        self._thread = threading.Thread(target=self._watch, name="rl-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        if self.timeout > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def beat(self, phase: str) -> None:
        self.phase = phase
        self._last = time.monotonic()

    def _watch(self) -> None:
        while not self._stop.wait(self._poll):
            idle = time.monotonic() - self._last
            if idle > self.timeout:
                self._on_fire(
                    f"rl: no progress for {idle:.0f} s while {self.phase}; stopping. "
                    "If this step legitimately takes longer, raise --watchdog-seconds "
                    "(0 turns the watchdog off)."
                )
                return


def _exit(message: str) -> None:
    sys.stderr.write("\n" + message + "\n")
    sys.stderr.flush()
    os._exit(EXIT_WATCHDOG)
