"""What `rl sweep` does with a sweep, as `runner` does for `rl run`: the session around `run_sweep`
(run directory, checkpoints and resume, progress, watchdog, TensorBoard), then the ranking, the
CSV of every member and the summary; and the request a stopped sweep is resumed with."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from rl_cli.errors import UserError
from rl_cli.stats import finite_or_none
from rl_cli.sweep import (
    OUTCOMES,
    SweepRequest,
    SweepResult,
    member_inputs,
    nan_if_none,
    plan_sweep,
    point_outcomes,
    sweep_result,
)
from rl_cli.sweep_points import (
    Sample,
)
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


def execute_sweep(req: SweepRequest, logdir: Path, run_name: str | None,
                  watchdog_seconds: float = 600.0, progress: bool = True,
                  console: Any = None, checkpoint_every: int = 0,
                  checkpoint_minutes: float = 10.0, resume_dir: Path | None = None,
                  ) -> dict[str, Any]:
    """`rl sweep`: validate everything, then (process 0 only) write config.json, TensorBoard runs
    (one per member, tagged with its hyperparameters), metrics.jsonl, checkpoints, sweep.csv,
    summary.json and print the ranking. With `resume_dir`, continues that sweep from its newest
    checkpoint (`rl resume`). Returns the summary."""
    import json
    import sys

    from rich.console import Console
    from rich.markup import escape

    from rl_cli.checkpointer import check_cadence, checkpointer_for
    from rl_cli.health import HealthMonitor
    from rl_cli.machine import computing_on, machine_change, machine_record
    from rl_cli.overrides import as_jsonable
    from rl_cli.progress import header
    from rl_cli.reporting import SweepLogger, ranking_table
    from rl_cli.resume import (
        check_rebuilt,
        checked_point,
        comparable,
        write_atomic,
        write_config,
    )
    from rl_cli.rundir import check_output
    from rl_cli.session import claimed, new_run_dir, train_members
    from rl_cli.watchdog import Watchdog
    from rl_core import chunk_length, is_main_process

    check_output(logdir, run_name)
    plan = plan_sweep(req)  # every user mistake surfaces here, before any file or compile
    main = is_main_process()
    console = console or Console(quiet=not main)
    algo = plan.prepared.algorithm
    chunk_len = req.log_every or chunk_length(algo.num_updates)
    check_cadence(checkpoint_every, checkpoint_minutes, 0, chunk_len, algo.num_updates)
    total_steps = algo.num_updates * algo.steps_per_update
    n = len(plan.members)
    keys, hp = member_inputs(plan)
    info = {"algo": req.algo, "env": req.env, "num_members": n,
            "num_updates": algo.num_updates}
    point = checked_point(resume_dir, algo, keys, hp, info, console)
    done = 0 if point is None else point.updates_done
    run_dir = None
    if main:
        run_dir = resume_dir or new_run_dir(logdir, f"sweep-{req.algo}-{req.env}", run_name)
    record = {
        "algo": req.algo, "env": req.env, "env_kwargs": plan.prepared.env_kwargs,
        "preset": plan.prepared.preset, "grid": req.grid,
        "sample": {k: s._asdict() for k, s in req.sample.items()},
        "num_samples": req.num_samples, "num_seeds": req.num_seeds, "seed": req.seed,
        "num_points": len(plan.points), "num_members": n,
        "config": as_jsonable(plan.prepared.config),
        "points": [as_jsonable(p) for p in plan.points],
        "num_updates": algo.num_updates, "steps_per_update": algo.steps_per_update,
        "steps_per_member": total_steps,
        **machine_record(),
        "mesh_devices": 1 if plan.mesh is None else int(plan.mesh.devices.size),
        "command": sys.argv,
        "sweep_request": {**{k: getattr(req, k)
                             for k in SweepRequest.__dataclass_fields__},
                          "sample": {k: s._asdict() for k, s in req.sample.items()},
                          "log_every": chunk_len, "watchdog_seconds": watchdog_seconds,
                          "checkpoint_every": checkpoint_every,
                          "checkpoint_minutes": checkpoint_minutes},
    }
    if point is not None:  # on every process, before any of them compiles
        check_rebuilt(point, record)
    with claimed(run_dir, fresh=point is None):
        write_config(run_dir, record, point)
        mesh_note = "1 device" if plan.mesh is None else \
            f"members sharded over {plan.mesh.devices.size} devices"
        header(console,
            f"[bold]sweep[/] {req.algo} on [bold]{req.env}[/]",
            f"{len(plan.points)} point(s) x {req.num_seeds} seed(s) = {n} members in one program",
            f"{total_steps:,} steps each", mesh_note, escape(computing_on()),
            f"run dir {escape(str(run_dir))}",
            f"resuming at update {done}/{algo.num_updates}" if point else "",
            escape(machine_change(record)) if point and run_dir is not None else "")
        logger = None
        if run_dir is not None:
            hp_rows = [{k: float(v) for k, v in plan.points[m.point]._asdict().items()}
                       for m in plan.members]
            logger = SweepLogger(run_dir, plan.members, hp_rows, algo.steps_per_update,
                                 resume_at=None if point is None else done,
                                 elapsed_offset=0.0 if point is None else point.elapsed,
                                 tracker=open_tracker(req.track, run_dir, record))
        health = HealthMonitor([m.name for m in plan.members])
        ckpt = checkpointer_for(run_dir, {**info, "record": comparable(record)}
                                if run_dir is not None else info, checkpoint_every,
                                checkpoint_minutes,
                                warn=console.print)
        with Watchdog(watchdog_seconds) as dog:
            trained = train_members(algo, keys, hp, chunk_len, plan.mesh, console=console,
                                    logger=logger, dog=dog, health=health, checkpointer=ckpt,
                                    progress=progress, run_dir=run_dir, start=point,
                                    what="sweep program")
            dog.beat("saving results")
        result = sweep_result(plan, trained.result, trained.compile_seconds, trained.run_seconds)
        summary = {
            "algo": req.algo, "env": req.env, "num_points": len(plan.points), "num_members": n,
            "swept": plan.swept,
            "ranking": [{"rank": r.rank, "point": r.point, "hparams": r.hparams,
                         "final_return_mean": finite_or_none(r.mean),
                         "final_return_ci95": finite_or_none(r.ci95),
                         "num_seeds": r.num_seeds, **point_outcomes(result, r.point)}
                        for r in result.ranking],
            "final_return_definition": FINAL_RETURN_DEFINITION,
            **result.outcomes,
            **trained.summary_fields(algo, n, point, run_dir, health),
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
        session = {k: fields.pop(k) for k in ("watchdog_seconds", "checkpoint_every",
                                              "checkpoint_minutes")}
        fields["sample"] = {k: Sample(**v) for k, v in fields["sample"].items()}
        req = SweepRequest(**fields)
    except (TypeError, KeyError, AttributeError, ValueError) as e:
        raise UserError(f"'{run_dir}/config.json' records a sweep this version cannot read "
                        f"({e})") from None
    if total_timesteps is not None:
        req.total_timesteps = total_timesteps
    return req, session
