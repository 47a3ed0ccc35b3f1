"""`rl evolve`: the command line of meta-evolution (`evolve_runner` does the work; this module
imports nothing heavy, so `rl --help` stays fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rl_cli.options import total_timesteps_option, watchdog_option


@click.command("evolve")
@click.option("--meta", default=None, help="What to evolve: drift (LPO), ta_lpo (a drift "
              "that also reads the training progress) or value_loss [default: drift].")
@click.option("--algo", default=None, help="Inner algorithm whose part is evolved [default: ppo].")
@click.option("--env", "envs", multiple=True, metavar="ID",
              help="Inner environment (repeatable: fitness averaged over them, relative to PPO).")
@click.option("--strategy", default=None,
              help="Evolution strategy: open_es, snes or cma_es [default: open_es].")
@click.option("--population", type=int, default=None, help="Meta-parameter vectors per "
              "generation [default: 16].")
@click.option("--generations", type=int, default=None, help="Total generations [default: 10]; "
              "with --resume, the new total.")
@click.option("--inner-seeds", type=int, default=None,
              help="Agents trained per member and environment [default: 2].")
@total_timesteps_option("Environment steps per inner agent [default: 5e4].")
@click.option("--hidden", type=int, default=None, help="Meta-network width [default: 32].")
@click.option("--sigma", type=float, default=None, help="Search noise std [default: 0.1].")
@click.option("--es-lr", type=float, default=None, help="open_es step size (Adam) [default: 0.05].")
@click.option("--init-scale", type=float, default=None,
              help="Scale of the initial meta-network weights [default: 0.5].")
@click.option("--seed", type=int, default=None, help="Root seed [default: 0].")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override a PPO config field or hyperparameter of the inner agents.")
@click.option("--preset", default=None, help="PPO preset of the inner agents ('none': defaults).")
@click.option("--baseline/--no-baseline", default=None,
              help="Train hand-designed PPO on the same budget as a reference [default: on].")
@click.option("--normalise/--no-normalise", default=None,
              help="Fitness relative to PPO's return [default: on with several --env].")
@click.option("--window", type=float, default=None, help="Fraction of the last updates whose "
              "episodes score an agent [default: 0.05, the final return of rl run].")
@click.option("--resume", type=click.Path(path_type=Path), default=None,
              help="Continue the run in this directory with its recorded settings.")
@click.option("--logdir", default="runs", show_default=True, type=click.Path(path_type=Path))
@click.option("--run-name", default=None,
              help="Run directory name (default: evolve-META-ENV-time).")
@watchdog_option("a generation")
@click.option("--devices", type=int, default=None,
              help="Use the first N devices (default: all, the population sharded over them).")
def evolve(meta: str | None, algo: str | None, envs: tuple[str, ...], strategy: str | None,
           population: int | None, generations: int | None, inner_seeds: int | None,
           total_timesteps: int | None, hidden: int | None, sigma: float | None,
           es_lr: float | None, init_scale: float | None, seed: int | None,
           sets: tuple[str, ...], preset: str | None, baseline: bool | None,
           normalise: bool | None, window: float | None, resume: Path | None, logdir: Path,
           run_name: str | None, watchdog_seconds: float, devices: int | None) -> None:
    """Evolve a part of PPO (its drift: LPO, or its value loss) with an evolution strategy."""
    from rl_cli.evolve import evolve_request
    from rl_cli.evolve_runner import execute_evolve
    from rl_cli.overrides import parse_assignments

    given: dict[str, Any] = {
        "meta": meta, "algo": algo, "envs": list(envs) or None, "strategy": strategy,
        "population": population, "inner_seeds": inner_seeds, "total_timesteps": total_timesteps,
        "hidden": hidden, "sigma": sigma, "es_lr": es_lr, "init_scale": init_scale, "seed": seed,
        "sets": parse_assignments(sets) or None, "preset": preset, "baseline": baseline,
        "normalise": normalise, "window": window, "devices": devices}
    req = evolve_request(given, generations, resume, run_name)
    execute_evolve(req, logdir, run_name, resume, watchdog_seconds)
