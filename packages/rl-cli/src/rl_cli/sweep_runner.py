"""What `rl sweep` does with a sweep, as `runner` does for `rl run`: the session around `run_sweep`
(run directory, checkpoints and resume, progress, watchdog, TensorBoard), then the ranking, the
CSV of every member and the summary; and the request a stopped sweep is resumed with."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, NamedTuple

from rl_cli.errors import UserError
from rl_cli.stats import finite_or_none
from rl_cli.sweep import (
    OUTCOMES,
    SweepPlan,
    SweepRequest,
    SweepResult,
    member_inputs,
    nan_if_none,
    plan_sweep,
    point_outcomes,
    sweep_result,
)
from rl_cli.sweep_points import Sample
from rl_cli.trackers import open_tracker
from rl_core import FINAL_RETURN_DEFINITION


def write_csv(path: Path, result: SweepResult) -> None:
    """One row per member: its point, seed, every hyperparameter, final return (and win rate or
    score where the environment reports them), and its point's mean and CI (so a spreadsheet
    can sort by either)."""
    by_point = {r.point: r for r in result.ranking}
    names = list(result.points[0]) if result.points else []
    extra = [k for k in OUTCOMES if k in result.outcomes]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["member", "point", "seed", *names, "final_return",
                    *(OUTCOMES[k].column for k in extra), "point_rank", "point_mean_final_return",
                    "point_ci95"])
        for m in result.members:
            r = by_point[m.point]
            w.writerow([m.name, m.point, m.seed, *(repr(result.points[m.point][k]) for k in names),
                        _num(result.final_returns[m.position]),
                        *(_num(nan_if_none(result.outcomes[k][m.position])) for k in extra),
                        r.rank, _num(r.mean), _num(r.ci95)])


def _num(x: float) -> str:
    return repr(float(x)) if math.isfinite(float(x)) else ""


class SweepSession(NamedTuple):
    """How long a sweep may stall and when it checkpoints: recorded with its request, so that
    `rl resume` keeps them."""

    watchdog_seconds: float = 600.0
    checkpoint_every: int = 0
    checkpoint_minutes: float = 10.0


class SweepRunPlan(NamedTuple):
    """What `execute_sweep` settles before it claims or writes the run directory (a resume reads
    its checkpoint here): the planned sweep (points, members, mesh), the chunk length, the
    members' keys and hyperparameters, the checkpoint to continue from (None: a fresh sweep) and
    the config.json record."""

    req: SweepRequest
    sweep: SweepPlan
    session: SweepSession
    chunk_len: int
    keys: Any
    hp: Any
    point: Any
    record: dict[str, Any]

    @property
    def info(self) -> dict[str, Any]:
        return _info(self.req, self.sweep)


def _info(req: SweepRequest, sweep: SweepPlan) -> dict[str, Any]:
    """What a checkpoint's header says of the sweep, checked again on resume."""
    return {"algo": req.algo, "env": req.env, "num_members": len(sweep.members),
            "num_updates": sweep.prepared.algorithm.num_updates}


def execute_sweep(req: SweepRequest, logdir: Path, run_name: str | None,
                  watchdog_seconds: float = 600.0, progress: bool = True,
                  console: Any = None, checkpoint_every: int = 0,
                  checkpoint_minutes: float = 10.0, resume_dir: Path | None = None,
                  ) -> dict[str, Any]:
    """`rl sweep`: validate everything, then (process 0 only) write config.json, TensorBoard runs
    (one per member, tagged with its hyperparameters), metrics.jsonl, checkpoints, sweep.csv,
    summary.json and print the ranking. With `resume_dir`, continues that sweep from its newest
    checkpoint (`rl resume`). Returns the summary. The steps are `rl run`'s (`runner.execute`):
    `plan_sweep` (every user mistake, before any file or compile), `plan` (members' inputs, the
    checkpoint to continue, the record), the session (`claimed` run directory, header), `train`
    and `finish` (ranking, CSV, summary)."""
    from rich.console import Console

    from rl_cli.resume import write_config
    from rl_cli.rundir import check_output
    from rl_cli.session import claimed, new_run_dir
    from rl_core import is_main_process

    check_output(logdir, run_name)
    sweep = plan_sweep(req)
    main = is_main_process()
    console = console or Console(quiet=not main)
    run = plan(req, sweep, SweepSession(watchdog_seconds, checkpoint_every, checkpoint_minutes),
               resume_dir, console)
    run_dir = None
    if main:
        run_dir = resume_dir or new_run_dir(logdir, f"sweep-{req.algo}-{req.env}", run_name)
    with claimed(run_dir, fresh=run.point is None):
        write_config(run_dir, run.record, run.point)
        _header(console, run, run_dir)
        trained, logger, health = train(run, run_dir, console, progress)
        return finish(run, run_dir, console, trained, logger, health)


def plan(req: SweepRequest, sweep: SweepPlan, session: SweepSession, resume_dir: Path | None,
         console: Any) -> SweepRunPlan:
    """The members' inputs and the sweep's record; with `resume_dir`, the checkpoint to continue
    from, refused when this version would build the sweep differently (`check_rebuilt`)."""
    import sys

    from rl_cli.checkpointer import check_cadence
    from rl_cli.machine import machine_record
    from rl_cli.overrides import as_jsonable
    from rl_cli.resume import check_rebuilt, checked_point
    from rl_core import chunk_length

    algo = sweep.prepared.algorithm
    chunk_len = req.log_every or chunk_length(algo.num_updates)
    check_cadence(session.checkpoint_every, session.checkpoint_minutes, 0, chunk_len,
                  algo.num_updates)
    keys, hp = member_inputs(sweep)
    point = checked_point(resume_dir, algo, keys, hp, _info(req, sweep), console)
    samples = {k: s._asdict() for k, s in req.sample.items()}
    record = {
        "algo": req.algo, "env": req.env, "env_kwargs": sweep.prepared.env_kwargs,
        "preset": sweep.prepared.preset, "grid": req.grid, "sample": samples,
        "num_samples": req.num_samples, "num_seeds": req.num_seeds, "seed": req.seed,
        "num_points": len(sweep.points), "num_members": len(sweep.members),
        "config": as_jsonable(sweep.prepared.config),
        "points": [as_jsonable(p) for p in sweep.points],
        "num_updates": algo.num_updates, "steps_per_update": algo.steps_per_update,
        "steps_per_member": algo.num_updates * algo.steps_per_update,
        **machine_record(),
        "mesh_devices": 1 if sweep.mesh is None else int(sweep.mesh.devices.size),
        "command": sys.argv,
        "sweep_request": {**{k: getattr(req, k) for k in SweepRequest.__dataclass_fields__},
                          "sample": samples, "log_every": chunk_len, **session._asdict()},
    }
    if point is not None:  # on every process, before any of them compiles
        check_rebuilt(point, record)
    return SweepRunPlan(req, sweep, session, chunk_len, keys, hp, point, record)


def _header(console: Any, run: SweepRunPlan, run_dir: Path | None) -> None:
    from rich.markup import escape

    from rl_cli.machine import computing_on, machine_change
    from rl_cli.progress import header

    req, sweep, point = run.req, run.sweep, run.point
    algo = sweep.prepared.algorithm
    mesh_note = "1 device" if sweep.mesh is None else \
        f"members sharded over {sweep.mesh.devices.size} devices"
    header(console,
           f"[bold]sweep[/] {req.algo} on [bold]{req.env}[/]",
           f"{len(sweep.points)} point(s) x {req.num_seeds} seed(s) = {len(sweep.members)} "
           "members in one program",
           f"{algo.num_updates * algo.steps_per_update:,} steps each", mesh_note,
           escape(computing_on()), f"run dir {escape(str(run_dir))}",
           f"resuming at update {point.updates_done}/{algo.num_updates}" if point else "",
           escape(machine_change(run.record)) if point and run_dir is not None else "")


def train(run: SweepRunPlan, run_dir: Path | None, console: Any,
          progress: bool) -> tuple[Any, Any, Any]:
    """The chunk loop with its logger (one TensorBoard run per member), checkpointer and
    watchdog: `(trained, logger, health)`."""
    from rl_cli.checkpointer import checkpointer_for
    from rl_cli.health import HealthMonitor
    from rl_cli.reporting import SweepLogger
    from rl_cli.resume import comparable
    from rl_cli.session import train_members
    from rl_cli.watchdog import Watchdog

    sweep, point, session = run.sweep, run.point, run.session
    algo = sweep.prepared.algorithm
    logger = None
    if run_dir is not None:
        hp_rows = [{k: float(v) for k, v in sweep.points[m.point]._asdict().items()}
                   for m in sweep.members]
        logger = SweepLogger(run_dir, sweep.members, hp_rows, algo.steps_per_update,
                             resume_at=None if point is None else point.updates_done,
                             elapsed_offset=0.0 if point is None else point.elapsed,
                             tracker=open_tracker(run.req.track, run_dir, run.record))
    health = HealthMonitor([m.name for m in sweep.members])
    ckpt = checkpointer_for(run_dir, {**run.info, "record": comparable(run.record)}
                            if run_dir is not None else run.info, session.checkpoint_every,
                            session.checkpoint_minutes, warn=console.print)
    with Watchdog(session.watchdog_seconds) as dog:
        trained = train_members(algo, run.keys, run.hp, run.chunk_len, sweep.mesh,
                                console=console, logger=logger, dog=dog, health=health,
                                checkpointer=ckpt, progress=progress, run_dir=run_dir,
                                start=point, what="sweep program")
        dog.beat("saving results")
    return trained, logger, health


def finish(run: SweepRunPlan, run_dir: Path | None, console: Any, trained: Any, logger: Any,
           health: Any) -> dict[str, Any]:
    """The ranking: sweep.csv, summary.json (atomically) and the ranking table."""
    import json

    from rl_cli.reporting import ranking_table
    from rl_cli.resume import write_atomic

    sweep, req = run.sweep, run.req
    algo, n = sweep.prepared.algorithm, len(sweep.members)
    result = sweep_result(sweep, trained.result, trained.compile_seconds, trained.run_seconds)
    summary = {
        "algo": req.algo, "env": req.env, "num_points": len(sweep.points), "num_members": n,
        "swept": sweep.swept,
        "ranking": [{"rank": r.rank, "point": r.point, "hparams": r.hparams,
                     "final_return_mean": finite_or_none(r.mean),
                     "final_return_ci95": finite_or_none(r.ci95),
                     "num_seeds": r.num_seeds, **point_outcomes(result, r.point)}
                    for r in result.ranking],
        "final_return_definition": FINAL_RETURN_DEFINITION,
        **result.outcomes,
        **trained.summary_fields(algo, n, run.point, run_dir, health),
    }
    if logger is not None and run_dir is not None:
        logger.close(result.final_returns)
        write_csv(run_dir / "sweep.csv", result)
        write_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    console.print(ranking_table(result, summary))
    return summary


def resume_sweep_request(run_dir: Path, record: dict[str, Any],
                         total_timesteps: int | None) -> tuple[SweepRequest, dict[str, Any]]:
    """The `SweepRequest` recorded in a sweep's config.json, and its session settings
    (watchdog, checkpoint cadence)."""
    try:
        fields = dict(record)
        session = {k: fields.pop(k) for k in SweepSession._fields}
        fields["sample"] = {k: Sample(**v) for k, v in fields["sample"].items()}
        req = SweepRequest(**fields)
    except (TypeError, KeyError, AttributeError, ValueError) as e:
        raise UserError(f"'{run_dir}/config.json' records a sweep this version cannot read "
                        f"({e})") from None
    if total_timesteps is not None:
        req.total_timesteps = total_timesteps
    return req, session
