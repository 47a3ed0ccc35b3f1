"""When a run writes its checkpoints (`checkpoint` is how): every so many updates or minutes, and
at once when SIGINT or SIGTERM asks the run to stop, after which the run ends with the exit code a
shell reports for that signal. One Ctrl-C reaches `rl` as several SIGINTs under `uv run`; the
copies within `REPEAT_WINDOW_SECONDS` count as one."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rl_cli import timings
from rl_cli.checkpoint import write_checkpoint
from rl_cli.errors import UserError

# Exit codes of a run stopped by a signal after saving, as a shell reports a process killed by it.
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
# One Ctrl-C can arrive as several SIGINTs: a terminal signals the whole foreground process group
# and `uv run`, which is in it, forwards its copy to `rl` as well (measured 0.2 s after the
# first). Copies within this many seconds of the first signal are that same Ctrl-C; a SIGINT
# after it is a deliberate second one and aborts at once.
REPEAT_WINDOW_SECONDS = 1.5


def _is_copy(first_at: float) -> bool:
    """Whether a SIGINT arriving now is a copy of the one that came at `first_at` (monotonic)."""
    return time.monotonic() - first_at <= REPEAT_WINDOW_SECONDS


def ignoring_copies(previous: Any) -> Callable[[int, Any], None]:
    """A SIGINT handler for what follows a stop (`rl_cli.session.claimed`): a SIGINT within
    `REPEAT_WINDOW_SECONDS` from now is a copy of the Ctrl-C that stopped the run and is ignored,
    so it cannot cut the exit path's one line; a later one is the user's own, and goes to the
    handler it replaces, `previous`, put back first (in a notebook: KeyboardInterrupt)."""
    since = time.monotonic()

    def handler(signum: int, frame: Any) -> None:
        if _is_copy(since):
            return
        signal.signal(signal.SIGINT, previous)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            raise KeyboardInterrupt

    return handler


class Interrupted(Exception):
    """A run stopped by SIGINT/SIGTERM after writing its checkpoint (`path`)."""

    def __init__(self, signum: int, path: Path | None):
        self.signum, self.path = signum, path
        super().__init__(signal.Signals(signum).name)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return SIGNAL_EXIT.get(signal.Signals(self.signum), 128 + self.signum)


class Checkpointer:
    """`rl_core.Checkpointing` for the CLI: a checkpoint every `every_updates` updates, every
    `every_seconds` of training, at the end, and at the first chunk boundary after SIGINT or
    SIGTERM, after which it raises `Interrupted` (the run then exits 130/143; a signal during
    the last chunk lets the run finish). `on_eval` is called with the state every `eval_every`
    updates (periodic evaluation); `run_dir` None (processes other than 0) writes nothing."""

    def __init__(self, run_dir: Path | None, info: dict[str, Any], every_updates: int = 0,
                 every_seconds: float = 0.0, eval_every: int = 0, on_eval: Any = None):
        self.run_dir, self.info = run_dir, info
        self.every_updates, self.every_seconds = every_updates, every_seconds
        self.eval_every, self.on_eval = eval_every, on_eval
        self.last_time = self.started = time.monotonic()
        self.offset = 0.0
        self.signum: int | None = None
        self.last_path: Path | None = None
        self._saving = False

    def start_clock(self, elapsed_before: float = 0.0) -> None:
        """Training starts now, after `elapsed_before` seconds in earlier sessions of the run
        (recorded in each checkpoint as `elapsed`)."""
        self.last_time = self.started = time.monotonic()
        self.offset = elapsed_before

    def due(self, updates_done: int, final: bool) -> bool:
        self._saving = (final or self.signum is not None
                        or bool(self.every_updates and updates_done % self.every_updates == 0)
                        or bool(self.every_seconds
                                and time.monotonic() - self.last_time >= self.every_seconds))
        evaluate = bool(self.eval_every and updates_done % self.eval_every == 0)
        return self._saving or evaluate

    def save(self, state: Any) -> None:
        stopping = self.signum is not None
        if not stopping and self.on_eval is not None and self.eval_every \
                and state.updates_done % self.eval_every == 0:
            self.on_eval(state)  # skipped when a signal asks to stop: the checkpoint comes first
        if not self._saving:
            return
        if self.run_dir is not None:
            timings.mark("training")
            elapsed = self.offset + time.monotonic() - self.started
            self.last_path = write_checkpoint(self.run_dir, state,
                                              {**self.info, "elapsed": elapsed})
            timings.mark("checkpoint")
        self.last_time = time.monotonic()
        if stopping and state.updates_done < self.info["num_updates"]:
            raise Interrupted(self.signum, self.last_path)  # type: ignore[arg-type]

    def __enter__(self) -> Checkpointer:
        """Catches SIGINT and SIGTERM: the first asks for a checkpoint and a stop at the next
        chunk boundary; copies of it within `REPEAT_WINDOW_SECONDS` are ignored, and a SIGINT
        after that window stops at once (KeyboardInterrupt), keeping the previous checkpoint."""
        self._previous = {s: signal.getsignal(s) for s in SIGNAL_EXIT}
        first_at = [0.0]

        def handler(signum: int, frame: Any) -> None:
            if signum != signal.SIGINT:  # SIGTERM: stop as asked, and exit 143
                self.signum = signum
            elif self.signum is None:
                self.signum, first_at[0] = signum, time.monotonic()
            elif self.signum != signal.SIGINT or not _is_copy(first_at[0]):
                raise KeyboardInterrupt  # a deliberate Ctrl-C, not a copy of the first

        for s in SIGNAL_EXIT:
            signal.signal(s, handler)
        return self

    def __exit__(self, *exc: object) -> None:
        """Restores the previous handlers; after a caught signal the SIGINT handler stays, so
        that a copy of that Ctrl-C arriving after the stop (`uv run`'s, while the process
        reports its checkpoint) is ignored as well."""
        for s, h in self._previous.items():
            if not (s == signal.SIGINT and self.signum is not None):
                signal.signal(s, h)


def check_cadence(every_updates: int, minutes: float, eval_every: int, chunk_len: int,
                  num_updates: int) -> None:
    """`--checkpoint-every` and `--eval-every` count updates at chunk boundaries: each must be 0
    (off) or a positive multiple of the chunk length; `--checkpoint-minutes` a number >= 0."""
    for flag, value in (("--checkpoint-every", every_updates), ("--eval-every", eval_every)):
        if value < 0 or value % chunk_len:
            raise UserError(f"{flag} {value} must be 0 (off) or a multiple of the chunk length "
                            f"of {chunk_len} updates (this run has {num_updates} updates; set "
                            "the chunk length with --log-every)")
    if eval_every > num_updates:
        raise UserError(f"--eval-every {eval_every} is longer than the run ({num_updates} "
                        f"updates): no evaluation would happen; pick at most {num_updates}, or "
                        "0 for none (the final agents are evaluated anyway: --eval-episodes)")
    if not minutes >= 0 or minutes == float("inf"):
        raise UserError(f"--checkpoint-minutes must be a number >= 0 (0: off), got {minutes}")


def checkpointer_for(run_dir: Path | None, info: dict[str, Any], every_updates: int,
                     minutes: float, eval_every: int = 0, on_eval: Any = None,
                     warn: Any = None) -> Checkpointer:
    """The `Checkpointer` of a command's flags. Several processes (multi-host) checkpoint only at
    counted updates and the end: a clock or a signal could differ between them, and the state is
    gathered from all of them, so every process must stop at the same boundaries (`warn` says so
    when only a time cadence was asked for)."""
    import jax

    seconds = 60.0 * minutes if jax.process_count() == 1 else 0.0
    if jax.process_count() > 1 and minutes and not every_updates and warn is not None:
        warn(f"with {jax.process_count()} processes checkpoints are written only every "
             "--checkpoint-every updates and at the end (not by time or on signals); pass "
             "--checkpoint-every to checkpoint during the run")
    return Checkpointer(run_dir, info, every_updates, seconds, eval_every, on_eval)
