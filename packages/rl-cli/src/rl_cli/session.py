"""What every command that trains shares around the compiled program (`rl run`, `rl sweep`,
`rl resume`; `rl evolve` uses the run directory): a fresh run directory, the observer that turns
each finished chunk into log lines, a progress bar step and a watchdog beat, and the chunk loop
itself with its checkpoints (`train_members`)."""

from __future__ import annotations

import contextlib
import math
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli import timings
from rl_cli.checkpoint import list_checkpoints, remove_stale_temporaries
from rl_cli.checkpointer import ignoring_copies
from rl_cli.errors import RunStopped, Terminated, UserError
from rl_cli.reporting import summarise_chunk
from rl_cli.rundir import RunLock, check_output
from rl_cli.startup import resume_gc

FORECAST_AFTER = 3  # chunks timed after the first before the run's remaining time is forecast


def new_run_dir(logdir: Path, stem: str, run_name: str | None = None) -> Path:
    """Creates `logdir/<run_name>` (default `<stem>-<time>`), or `...-2`, `-3`, ... when that
    exists, so that no run overwrites another. The name and the log directory are checked first
    (`check_output`); a failure to create the directory is a UserError."""
    check_output(logdir, run_name)
    # An id's '/' (and an import path's ':') would be a folder or a drive separator.
    stem = stem.replace("/", "_").replace(":", "_")
    name = run_name or f"{stem}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    path, i = logdir / name, 1
    while path.exists():
        i += 1
        path = logdir / f"{name}-{i}"
    try:
        path.mkdir(parents=True)
    except OSError as e:
        raise UserError(f"cannot create the run directory '{path}' ({e.strerror}); pass a "
                        "--logdir you can write to") from None
    return path


class StopRequest:
    """The signal that asked a training command to stop (SIGINT or SIGTERM), kept even where
    a library swallows the exception it raised inside compiled code: `raise_if_requested` ends
    the command at the next point it is checked (after compiling, before training)."""

    signum: int | None = None

    @classmethod
    def raise_if_requested(cls) -> None:
        if cls.signum is not None:
            raise KeyboardInterrupt if cls.signum == signal.SIGINT else Terminated()


def _stop(signum: int, frame: Any) -> None:
    StopRequest.signum = signum
    StopRequest.raise_if_requested()


def _holds_results(run_dir: Path) -> bool:
    """A checkpoint, parameters or a logged chunk: what a stopped run keeps for `rl resume`."""
    metrics = run_dir / "metrics.jsonl"
    return bool(list_checkpoints(run_dir)) or (run_dir / "params.eqx").exists() or \
        (metrics.exists() and metrics.stat().st_size > 0)


def holds_file(name: str) -> Callable[[Path], bool]:
    """`claimed`'s `holds` for a command whose results are one file (`rl evolve`'s
    checkpoint.npz): the directory keeps something to resume once `name` exists."""
    return lambda run_dir: (run_dir / name).exists()


@contextlib.contextmanager
def claimed(run_dir: Path | None, fresh: bool,
            holds: Callable[[Path], bool] = _holds_results) -> Iterator[None]:
    """Holds `run_dir`'s lock (`rundir.RunLock`) while a command trains in it (None: a process
    that writes nothing), with SIGINT and SIGTERM asking it to stop (inside the training loop
    the checkpointer takes them over: checkpoint, then stop). A fresh directory stopped before
    it holds a checkpoint, parameters or a logged chunk is removed, and the stop says so: there
    is nothing to resume; so is one a `UserError` ends before it holds any (an experiment
    tracker that cannot start, say). A read or write the system refuses while it trains names
    the directory, and the checkpoint `rl resume` would continue from. `holds(run_dir)` says
    whether the directory keeps something to resume (default: `rl run`'s and `rl sweep`'s
    checkpoints, parameters or logged chunks)."""
    if run_dir is None:
        yield
        return
    own = threading.current_thread() is threading.main_thread()
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    StopRequest.signum = None
    removed: BaseException | None = None
    discard = stopping = False
    try:
        with RunLock(run_dir):
            remove_stale_temporaries(run_dir)
            if own:
                for sig in previous:
                    signal.signal(sig, _stop)
            try:
                yield
            except (KeyboardInterrupt, Terminated) as stop:
                stopping = True
                if own:
                    for sig in previous:  # a copy of the signal must not cut the clean-up
                        signal.signal(sig, signal.SIG_IGN)
                if not fresh or holds(run_dir):
                    raise
                removed = stop
            except RunStopped:  # the checkpointer's stop at a chunk boundary
                stopping = True
                raise
            except UserError:
                discard = fresh and not holds(run_dir)
                raise
            except OSError as e:
                if e.filename is None:
                    e.filename = str(run_dir)
                if list_checkpoints(run_dir):
                    e.resume_dir = run_dir  # type: ignore[attr-defined]
                raise
        if removed is not None:  # after the lock is closed: nothing inside is held open
            shutil.rmtree(run_dir, ignore_errors=True)
    finally:
        if discard:  # the lock is closed: nothing inside is held open
            shutil.rmtree(run_dir, ignore_errors=True)
        if own:  # after a stop, copies of its Ctrl-C (`uv run` forwards the terminal's, later
            # on a loaded CPU) are ignored for a moment, then SIGINT is the caller's again
            for sig, handler in previous.items():
                signal.signal(sig, ignoring_copies(handler) if stopping and sig == signal.SIGINT
                              else handler)
    if removed is not None:
        name, code = ("SIGINT", 130) if isinstance(removed, KeyboardInterrupt) else \
            ("SIGTERM", 143)
        gone = "removed" if not run_dir.exists() else "could not be removed"
        raise RunStopped(f"stopped by {name} before the first checkpoint: nothing to resume "
                         f"({run_dir} {gone})", code) from None


def chunk_observer(algo: Any, logger: Any, view: Any, dog: Any, health: Any = None,
                   console: Any = None) -> Callable[[Any], None]:
    """`on_chunk` for `rl_core.run_members`: summarises the chunk's `EPISODE_METRICS`, logs it
    (when this process writes), advances the progress view with the mean return and tells the
    watchdog what runs next. With a `HealthMonitor` (rl_cli.health) and a console, prints its
    warnings (NaN/inf, diverging losses; `--halt-on-nan` raises there, after logging the chunk);
    prints how long the first chunk took and, from the median time of the `FORECAST_AFTER`
    chunks after it (the first carries the program's warm-up, and the next few share the CPU
    with the background preparation of the evaluation and the plots: a forecast from the second
    alone ran 2x long on the quickstart), how long the rest of the run will take."""
    ends: list[float] = []  # `elapsed` at the end of each chunk of this session

    def on_chunk(rep: Any) -> None:
        chunk = summarise_chunk(rep.metrics)
        if logger is not None:
            logger.log(rep.updates_done, rep.elapsed, chunk)
        ret = chunk["episode_return"]
        view.update(rep.updates_done * algo.steps_per_update, rep.elapsed,
                    float(np.nanmean(ret)) if np.any(np.isfinite(ret)) else math.nan)
        ends.append(rep.elapsed)
        left = rep.num_chunks - rep.chunk - 1
        if console is not None and len(ends) == 1 and left > 0:
            console.print(f"members initialised in {rep.init_seconds:.2f} s; first chunk took "
                          f"{rep.elapsed - rep.init_seconds:.2f} s")
        elif console is not None and len(ends) == FORECAST_AFTER + 1 and left > 0:
            per_chunk = float(np.median(np.diff(ends)))
            console.print(f"a chunk takes {per_chunk:.2f} s: about {per_chunk * left:.0f} s for "
                          f"the {left} chunks left")
        if health is not None:
            for line in health.observe(rep):
                if console is not None:
                    console.print(line, style="bold yellow", markup=False, highlight=False)
        dog.beat(f"running chunk {rep.chunk + 2}/{rep.num_chunks} "
                 f"(update {rep.updates_done}/{algo.num_updates})")

    return on_chunk


class Trained(NamedTuple):
    """What `train_members` gives back."""

    result: Any  # rl_core.TrainResult: final carry `[M]`, metrics `[M, num_updates]`
    compile_seconds: float
    run_seconds: float  # this session's training (a resumed run: since it resumed)
    checkpoint: Path | None  # the last checkpoint written

    def summary_fields(self, algo: Any, members: int, start: Any, run_dir: Path | None,
                       health: Any) -> dict[str, Any]:
        """summary.json's account of the training, the same for every training command: the
        budget, compile and training seconds (`run_seconds_total` counts a resumed run's earlier
        sessions too), the throughput of this session, where it resumed (`start`, a
        `ResumePoint`), its last checkpoint, run directory and the members' health."""
        done = 0 if start is None else start.updates_done
        total = algo.num_updates * algo.steps_per_update
        return {
            "total_timesteps": total,
            "compile_seconds": self.compile_seconds,
            "run_seconds": self.run_seconds,
            "run_seconds_total": self.run_seconds + (0.0 if start is None else start.elapsed),
            "steps_per_second": members * (total - done * algo.steps_per_update)
            / max(self.run_seconds, 1e-9),
            **({"resumed_from_update": done} if start is not None else {}),
            "checkpoint": str(self.checkpoint or (start.path if start else None) or "") or None,
            "run_dir": str(run_dir),
            **health.summary(),
        }


def train_members(algo: Any, keys: Any, hp: Any, chunk_len: int, mesh: Any, *, console: Any,
                  logger: Any, dog: Any, health: Any, checkpointer: Any, progress: bool,
                  run_dir: Path | None, start: Any = None, what: str = "training program",
                  on_compiled: Callable[[], None] | None = None) -> Trained:
    """The chunk loop every training command shares (`rl run`, `rl sweep`, `rl resume`): compiles
    the members' program (timed apart), then runs its chunks from the start or from `start` (a
    checkpoint's `MembersState`) with the progress bar, the per-chunk observer (logging, health,
    watchdog beats) and `checkpointer` (`rl_cli.checkpointer.Checkpointer`; it catches SIGINT and
    SIGTERM only in a single-process run, where the signal reaches the one process that trains).
    A stop by signal closes the logger and becomes `RunStopped` (exit 130/143) naming the
    checkpoint and the command that resumes; `--halt-on-nan`'s `NonFiniteHalt` propagates."""
    import contextlib
    import time

    import jax

    from rl_cli.checkpointer import Interrupted
    from rl_cli.errors import RunStopped
    from rl_cli.progress import ProgressView
    from rl_core import compile_members, run_members

    dog.beat(f"compiling the {what}")
    with console.status(f"compiling the {what}…", spinner="dots"):
        compiled = compile_members(algo, keys, hp, chunk_len, mesh=mesh)
    StopRequest.raise_if_requested()  # a signal while compiling, whatever became of its error
    console.print(f"compiled in {compiled.compile_seconds:.2f} s")
    timings.mark("compile (or load from the cache)")
    resume_gc()  # start-up is over (rl_cli.startup)
    if on_compiled is not None:
        on_compiled()
    done = 0 if start is None else start.updates_done
    dog.beat(f"running chunk {done // chunk_len + 1}/{compiled.num_chunks} of {chunk_len} "
             "updates")
    offset = 0.0 if start is None else float(getattr(start, "elapsed", 0.0))
    total_steps = algo.num_updates * algo.steps_per_update
    with ProgressView(console, total_steps, len(keys), progress,
                      done * algo.steps_per_update) as view:
        t0 = time.perf_counter()
        observer = chunk_observer(algo, logger, view, dog, health, console)
        single = jax.process_count() == 1
        try:
            with checkpointer if single else contextlib.nullcontext():
                checkpointer.start_clock(offset)
                result = run_members(compiled, keys, hp, observer,
                                     start=None if start is None else start.state,
                                     checkpointing=checkpointer)
        except Interrupted as stop:
            if logger is not None:
                logger.close()
            raise RunStopped(f"stopped by {stop.signal_name} at a chunk boundary; checkpoint "
                             f"{stop.path}; continue with: rl resume {run_dir}",
                             stop.exit_code) from None
        jax.block_until_ready(result.state)
        run_seconds = time.perf_counter() - t0
        timings.mark("training")
    return Trained(result, compiled.compile_seconds, run_seconds, checkpointer.last_path)
