"""Experiment trackers beside TensorBoard: `--track wandb` (Weights & Biases) and `--track trackio`
(trackio's local store, W&B-compatible API). TensorBoard and metrics.jsonl stay the run's record;
a tracker gets a copy of every scalar TensorBoard gets, under the same tags (a sweep's member
series as `<member>/<tag>`), and the run's config.json as its config.

Both work without a network: trackio writes its local store (`TRACKIO_DIR`, by default under
the Hugging Face cache) and wandb, with `WANDB_MODE=offline`, writes its run into the run
directory (`RUN_DIR/wandb/`, uploaded later by `wandb sync`). The project is `WANDB_PROJECT` /
`TRACKIO_PROJECT` when set, else 'rl'; the tracker's run is named after the run directory, and
`rl resume` continues the same tracker run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from rl_cli.errors import UserError

TRACKERS = ("wandb", "trackio")
DEFAULT_PROJECT = "rl"


def check_tracker(kind: str | None) -> None:
    """A tracker that is not installed is one line naming the install, before anything runs."""
    if kind is None:
        return
    if kind not in TRACKERS:
        raise UserError(f"--track {kind!r} is not a tracker; choose one of {', '.join(TRACKERS)}")
    if importlib.util.find_spec(kind) is None:
        raise UserError(f"--track {kind} needs the {kind} package, which is not installed: "
                        f"install it with `pip install 'jaxrlkit-cli[{kind}]'` (in this "
                        f"workspace: `uv pip install {kind}`)")


class Tracker:
    """Scalars collected per step (`scalar`) and sent to the tracker once per step (`commit`),
    so a chunk's many tags make one tracker row."""

    def __init__(self, kind: str, run: Any):
        self.kind, self._run = kind, run
        self._rows: dict[int, dict[str, float]] = defaultdict(dict)

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._rows[step][tag] = float(value)

    def commit(self) -> None:
        for step in sorted(self._rows):
            self._run.log(self._rows[step], step=step)
        self._rows.clear()

    def finish(self) -> None:
        self.commit()
        self._run.finish()


def open_tracker(kind: str | None, run_dir: Path, config: dict[str, Any]) -> Tracker | None:
    """The tracker run for `run_dir` (the same one again when the run is resumed), or None."""
    if kind is None:
        return None
    check_tracker(kind)
    name = run_dir.name
    run: Any
    try:
        if kind == "wandb":
            import wandb

            # One id per run directory, so `rl resume` continues the tracker's run.
            run_id = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:16]
            run = wandb.init(project=os.environ.get("WANDB_PROJECT", DEFAULT_PROJECT),
                             name=name, id=run_id, resume="allow", dir=str(run_dir),
                             config=config, settings=wandb.Settings(console="off"))
        else:
            # trackio's log() imports matplotlib.figure to recognise figures; imported here
            # first, so that import cannot race the run's own plotting thread (a half-imported
            # module there makes trackio skip the metric).
            import matplotlib.figure  # noqa: F401
            import trackio

            run = trackio.init(project=os.environ.get("TRACKIO_PROJECT", DEFAULT_PROJECT),
                               name=name, config=config, resume="allow", embed=False,
                               auto_log_gpu=False, auto_log_cpu=False)
    except Exception as e:  # not logged in, no network, a bad setting: the tracker's words
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        hint = (" (offline: set WANDB_MODE=offline, and `wandb sync` the run later)"
                if kind == "wandb" else "")
        raise UserError(f"--track {kind}: {kind} could not start its run: "
                        f"{lines[0] if lines else type(e).__name__}{hint}") from None
    return Tracker(kind, run)


class TrackedWriter:
    """A TensorBoard `SummaryWriter` writing to `path` (events past `purge_step` dropped, for a
    resumed run) whose scalars also go to `tracker`, under `prefix + tag`."""

    def __init__(self, path: Path, purge_step: int | None, tracker: Tracker | None,
                 prefix: str = ""):
        from tensorboardX import SummaryWriter

        self.writer = SummaryWriter(str(path), purge_step=purge_step)
        self.tracker, self.prefix = tracker, prefix
        self.file_writer = self.writer.file_writer

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.writer.add_scalar(tag, value, step)
        if self.tracker is not None:
            self.tracker.scalar(self.prefix + tag, value, step)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
