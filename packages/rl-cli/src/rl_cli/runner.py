"""`rl run`: the composition root. Prepares the request (`request.prepare`: every input
validated before anything compiles or touches the disk), then compiles, trains, logs and saves,
and hands the final agents to `after`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from rich.console import Console
from rich.markup import escape

from rl_cli import timings
from rl_cli.after import AfterTraining, PeriodicEval, final_agents, final_evaluation, save_agents
from rl_cli.capacity import check_capacity
from rl_cli.checkpointer import check_cadence, checkpointer_for
from rl_cli.health import HealthMonitor, NonFiniteHalt
from rl_cli.overrides import as_jsonable
from rl_cli.plots import write_curves
from rl_cli.progress import header
from rl_cli.reporting import RunLogger, summary_table
from rl_cli.request import (
    Prepared,
    RunRequest,
    hparams_record,
    member_keys,
    member_mesh_for,
    prepare,
    request_record,
)
from rl_cli.resume import check_rebuilt, checked_point, comparable, write_atomic, write_config
from rl_cli.session import claimed, new_run_dir, train_members
from rl_cli.stats import final_achievements, final_returns, final_win_rates, mean_ci95
from rl_cli.trackers import open_tracker
from rl_cli.watchdog import Watchdog
from rl_core import FINAL_RETURN_DEFINITION


class RunPlan(NamedTuple):
    """What `execute` settles before it claims or writes the run directory (a resume reads its
    checkpoint here): the prepared request, the
    members (seeds, keys, broadcast hyperparameters), the chunk length, the device mesh, the
    checkpoint to continue from (None: a fresh run) and the config.json record."""

    req: RunRequest
    prep: Prepared
    mesh: Any
    chunk_len: int
    seeds: list[int]
    keys: Any
    hp: Any
    point: Any
    config_record: dict[str, Any]

    @property
    def names(self) -> list[str]:
        return [f"seed_{s}" for s in self.seeds]


def execute(req: RunRequest, console: Console | None = None,
            resume_dir: Path | None = None) -> dict[str, Any]:
    """Runs a validated request end to end, or with `resume_dir` continues that run from its
    newest checkpoint (`rl resume`); returns the summary written to summary.json. The steps:
    `prepare` (every user mistake, before any file or compile), `plan` (members, the checkpoint
    to continue, the record, the memory check), the session (`claimed` run directory, header),
    `train` (the chunk loop, parameters, greedy evaluation) and `finish` (summary)."""
    from rl_core import is_main_process

    console = console or Console(stderr=False)
    prep = prepare(req)
    main = is_main_process()  # only process 0 writes files and prints
    if not main:
        console = Console(quiet=True)
    run = plan(req, prep, resume_dir, console)
    run_dir = None
    if main:
        run_dir = resume_dir or new_run_dir(req.logdir, f"{req.algo}-{req.env}", req.run_name)
    with claimed(run_dir, fresh=run.point is None):
        write_config(run_dir, run.config_record, run.point)
        _header(console, run, run_dir)
        timings.mark("members, capacity check, config.json")
        trained, greedy, health = train(run, run_dir, console, main)
        return finish(run, run_dir, console, trained, greedy, health)


def plan(req: RunRequest, prep: Prepared, resume_dir: Path | None, console: Console) -> RunPlan:
    """The members and their record; with `resume_dir`, the checkpoint to continue from, refused
    when this version would build the run differently (`check_rebuilt`)."""
    import jax
    import jax.numpy as jnp

    from rl_algos.common import hparams_as_arrays
    from rl_cli.machine import machine_record
    from rl_core import chunk_length

    mesh = None if req.data_parallel else member_mesh_for(req.devices)
    algo, n = prep.algorithm, req.num_seeds
    chunk_len = req.log_every or chunk_length(algo.num_updates)
    check_cadence(req.checkpoint_every, req.checkpoint_minutes, req.eval_every, chunk_len,
                  algo.num_updates)
    hp_one = hparams_as_arrays(prep.hparams)
    seeds = [req.seed + i for i in range(n)]
    keys = member_keys(seeds)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *x.shape)), hp_one)
    point = checked_point(resume_dir, algo, keys, hp, _info(req, prep), console)
    config_record = {
        "algo": req.algo, "env": req.env, "env_kwargs": prep.env_kwargs, "preset": prep.preset,
        "num_seeds": n, "seeds": seeds, "config": as_jsonable(prep.config),
        "hparams": hparams_record(prep.spec, prep.hparams, req.meta_params),
        "num_updates": algo.num_updates, "steps_per_member": _total_steps(algo),
        "steps_per_update": algo.steps_per_update, "log_every_updates": chunk_len,
        **machine_record(),
        "parallelism": parallelism(mesh, req.data_parallel, req.devices),
        "command": sys.argv,
        "request": request_record(req, chunk_len),
    }
    if point is not None:
        check_rebuilt(point, config_record)
    with console.status("checking that the members fit in memory…", spinner="dots"):
        est = check_capacity(algo, hp_one, chunk_len, n if mesh is None else
                             -(-n // int(mesh.devices.size)))
    if est is not None:
        console.print(f"memory: about {est.need(n) / 2**30:.2f} GiB for {n:,} members, of "
                      f"{est.available_bytes / 2**30:.1f} GiB {est.where} available (at most "
                      f"{est.max_members():,} members fit; measured in {est.seconds:.1f} s)")
    return RunPlan(req, prep, mesh, chunk_len, seeds, keys, hp, point, config_record)


def _info(req: RunRequest, prep: Prepared) -> dict[str, Any]:
    """What a checkpoint's header says of the run, checked again on resume."""
    return {"algo": req.algo, "env": req.env, "num_members": req.num_seeds,
            "num_updates": prep.algorithm.num_updates}


def _total_steps(algo: Any) -> int:
    return algo.num_updates * algo.steps_per_update


def _header(console: Console, run: RunPlan, run_dir: Path | None) -> None:
    from rl_cli.machine import computing_on, machine_change

    req, algo, point = run.req, run.prep.algorithm, run.point
    header(console,
           f"[bold]{req.algo}[/] on [bold]{req.env}[/]", f"{req.num_seeds} seed(s)",
           f"{_total_steps(algo):,} steps each", f"preset {run.prep.preset or 'none'}",
           run.config_record["parallelism"], escape(computing_on()),
           f"run dir {escape(str(run_dir))}",
           f"resuming at update {point.updates_done}/{algo.num_updates}" if point else "",
           escape(machine_change(run.config_record)) if point else "")


def train(run: RunPlan, run_dir: Path | None, console: Console,
          main: bool) -> tuple[Any, dict[str, Any] | None, HealthMonitor]:
    """The chunk loop with its loggers, checkpointer and watchdog, then the final agents saved
    and, with `--eval-episodes`, evaluated greedily: `(trained, greedy summary, health)`."""
    req, prep, point = run.req, run.prep, run.point
    algo, names = prep.algorithm, run.names
    logger = None
    if run_dir is not None:
        logger = RunLogger(run_dir, names, algo.steps_per_update,
                           resume_at=None if point is None else point.updates_done,
                           elapsed_offset=0.0 if point is None else point.elapsed,
                           tracker=open_tracker(req.track, run_dir, run.config_record),
                           achievement_names=getattr(prep.env, "achievement_names", None))
    health = HealthMonitor(names, halt_on_nan=req.halt_on_nan)
    evaluator = PeriodicEval(prep.judge_env(), algo, req, logger) if req.eval_every else None
    ckpt = checkpointer_for(run_dir, {**_info(req, prep),
                                      "record": comparable(run.config_record)},
                            req.checkpoint_every, req.checkpoint_minutes,
                            req.eval_every, evaluator, warn=console.print)
    timings.mark("TensorBoard writer, metrics.jsonl open")
    evaluating = bool(req.eval_episodes) and main
    judge = prep.judge_env() if evaluating else None
    after = AfterTraining(plots=run_dir is not None, evaluation=(
        judge, algo, run.keys, run.hp, req.eval_episodes, req.seed) if evaluating else None)
    with Watchdog(req.watchdog_seconds) as dog, after:
        try:
            trained = train_members(algo, run.keys, run.hp, run.chunk_len, run.mesh,
                                    console=console, logger=logger, dog=dog, health=health,
                                    checkpointer=ckpt, progress=req.progress, run_dir=run_dir,
                                    start=point, on_compiled=after.start)
        except NonFiniteHalt as halt:
            _record_halt(run_dir, logger, req, run.seeds, health, halt)
            raise
        dog.beat("saving results")
        agents = final_agents(algo, trained.result.state)
        timings.mark("final agents")
        after.join()
        timings.mark("waiting for the background preparation")
        if logger is not None and run_dir is not None:
            logger.close()
            timings.mark("TensorBoard writer, metrics.jsonl close")
            save_agents(run_dir / "params.eqx", agents)
            timings.mark("params.eqx")
            write_curves(run_dir)
            timings.mark("curves.png")
        greedy = None
        if evaluating:
            dog.beat(f"evaluating: {req.eval_episodes} greedy episodes per member")
            greedy = final_evaluation(judge, algo.policy, agents, req.eval_episodes,
                                      req.seed, compiled=after.play)
            timings.mark("final greedy evaluation")
    return trained, greedy, health


def finish(run: RunPlan, run_dir: Path | None, console: Console, trained: Any,
           greedy: dict[str, Any] | None, health: HealthMonitor) -> dict[str, Any]:
    """summary.json (atomically) and the summary table."""
    req, algo, n = run.req, run.prep.algorithm, run.req.num_seeds
    metrics = trained.result.metrics
    finals = final_returns(np.asarray(metrics["episode_return_sum"]),
                           np.asarray(metrics["episode_count"]))
    mean, ci = mean_ci95(finals)
    summary = {
        "algo": req.algo, "env": req.env, "num_members": n, "seeds": run.seeds,
        "final_return_per_member": [None if not np.isfinite(r) else float(r) for r in finals],
        "final_return_mean": None if not np.isfinite(mean) else mean,
        "final_return_ci95": None if not np.isfinite(ci) else ci,
        "final_return_definition": FINAL_RETURN_DEFINITION,
        **final_win_rates(metrics),
        **final_achievements(metrics, run.prep.env),
        **(greedy or {}),
        **trained.summary_fields(algo, n, run.point, run_dir, health),
    }
    if run_dir is not None:
        write_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    timings.mark("summary.json")
    console.print(summary_table(run.names, finals, summary,
                                {name: h.status for name, h in health.flagged()}))
    timings.mark("summary table")
    return summary


def _record_halt(run_dir: Path | None, logger: Any, req: RunRequest, seeds: list[int],
                 health: HealthMonitor, halt: NonFiniteHalt) -> None:
    """What a run stopped by `--halt-on-nan` leaves: its metrics so far and a summary.json that
    says why it stopped (no parameters: they are not finite, and checkpoints do not exist)."""
    if logger is None or run_dir is None:
        return
    logger.close()
    summary = {"algo": req.algo, "env": req.env, "num_members": len(seeds), "seeds": seeds,
               "halted": str(halt), "run_dir": str(run_dir), **health.summary()}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))


def parallelism(mesh: Any, data_parallel: bool, devices: int | None) -> str:
    """One line for the console and config.json: how the run uses the devices."""
    import jax

    hosts = f" on {jax.process_count()} processes" if jax.process_count() > 1 else ""
    if data_parallel:
        n = devices or jax.local_device_count()
        return f"one agent per member, data-parallel over {n} device(s)"
    if mesh is None:
        return f"1 device{hosts}"
    return f"members sharded over {mesh.devices.size} devices{hosts}"
