"""What every command that trains shares around the compiled program (`rl run`, `rl sweep`,
`rl evolve`): a fresh run directory, and the observer that turns each finished chunk into log
lines, a progress bar step and a watchdog beat."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from rl_cli.reporting import summarise_chunk


def new_run_dir(logdir: Path, stem: str, run_name: str | None = None) -> Path:
    """Creates `logdir/<run_name>` (default `<stem>-<time>`), or `...-2`, `-3`, ... when that
    exists, so that no run overwrites another."""
    name = run_name or f"{stem.replace('/', '_')}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    path, i = logdir / name, 1
    while path.exists():
        i += 1
        path = logdir / f"{name}-{i}"
    path.mkdir(parents=True)
    return path


def chunk_observer(algo: Any, logger: Any, view: Any, dog: Any) -> Callable[[Any], None]:
    """`on_chunk` for `rl_core.run_members`: summarises the chunk's `EPISODE_METRICS`, logs it
    (when this process writes), advances the progress view with the mean return and tells the
    watchdog what runs next."""

    def on_chunk(rep: Any) -> None:
        chunk = summarise_chunk(rep.metrics)
        if logger is not None:
            logger.log(rep.updates_done, rep.elapsed, chunk)
        ret = chunk["episode_return"]
        view.update(rep.updates_done * algo.steps_per_update, rep.elapsed,
                    float(np.nanmean(ret)) if np.any(np.isfinite(ret)) else math.nan)
        dog.beat(f"running chunk {rep.chunk + 2}/{rep.num_chunks} "
                 f"(update {rep.updates_done}/{algo.num_updates})")

    return on_chunk
