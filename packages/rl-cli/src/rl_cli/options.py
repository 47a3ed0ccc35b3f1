"""The command-line options that several `rl` commands share, declared once: what a training
request takes (`rl run`, `rl sweep`), checkpoints, devices and hosts, and the checks of a
duration and of a step count, so that each value is validated in one place."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rl_cli.errors import UserError

Decorator = Callable[[Any], Any]


def seconds(ctx: click.Context | None, param: click.Parameter | None,
            value: float | None) -> float | None:
    """A duration: a finite number of seconds, >= 0 (0: off); None stays None (the default)."""
    if value is not None and (not math.isfinite(value) or value < 0):
        raise click.BadParameter(f"must be a finite number of seconds >= 0 (0: off), got {value}")
    return value


def whole_steps(ctx: click.Context | None, param: click.Parameter | None,
                value: float | None) -> int | None:
    """`--total-timesteps`: a whole number of environment steps (typed as 1e6 or 1000000)."""
    if value is None:
        return None
    if not float(value).is_integer():
        raise UserError(f"--total-timesteps must be a whole number, got {value}")
    return int(value)


def total_timesteps_option(help: str) -> Decorator:
    return click.option("--total-timesteps", type=float, default=None, callback=whole_steps,
                        help=help)


def watchdog_option(what: str, default: float | None = 600.0) -> Decorator:
    """`--watchdog-seconds`: stop with an error when `what` makes no progress for this long."""
    tail = "" if default is not None else "; default: the run's"
    return click.option("--watchdog-seconds", default=default, show_default=default is not None,
                        type=float, callback=seconds,
                        help=f"Stop with an error if {what} makes no progress for this long "
                             f"(0: off{tail}).")


def training_options(member: str, run_name: str, num_seeds: str) -> Decorator:
    """What a training request takes (`rl run` and `rl sweep`): the algorithm, the environment,
    seeds, budget, overrides and where to write. `member` names one trained agent in the help
    ('agent' or 'member'); `run_name` is the default directory name, `num_seeds` the help of
    `--num-seeds`."""
    options = [
        click.option("--algo", default="ppo", show_default=True, help="Algorithm (`rl algos`)."),
        click.option("--env", "env_id", default=None,
                     help="Environment id, e.g. gymnax/CartPole-v1 (required)."),
        click.option("--num-seeds", default=1, show_default=True, type=int, help=num_seeds),
        click.option("--seed", default=0, show_default=True, type=int,
                     help="First seed: member i uses SEED+i."),
        total_timesteps_option(f"Environment steps per {member} (default: the preset's)."),
        click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                     help="Override any config or hyperparameter field (repeatable)."),
        click.option("--env-arg", "env_args", multiple=True, metavar="KEY=VALUE",
                     help="Environment parameter, e.g. max_steps_in_episode=200 (repeatable)."),
        click.option("--preset", default=None,
                     help="Hyperparameter preset (default: chosen from the environment; 'none' "
                          "for the algorithm's defaults)."),
        click.option("--logdir", default="runs", show_default=True,
                     type=click.Path(path_type=Path)),
        click.option("--run-name", default=None,
                     help=f"Run directory name (default: {run_name})."),
        click.option("--log-every", type=int, default=None,
                     help="Updates per logged chunk (must divide the number of updates)."),
        watchdog_option("the run"),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
        click.option("--track", type=click.Choice(["wandb", "trackio"]), default=None,
                     help="Also send TensorBoard's scalars and the config to an experiment "
                          "tracker (wandb: WANDB_MODE=offline works without a network)."),
    ]

    def apply(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def checkpoint_options(f: Any) -> Any:
    """When `rl run` and `rl sweep` write full-state checkpoints."""
    f = click.option("--checkpoint-minutes", type=float, default=10.0, show_default=True,
                     help="Minutes of training between checkpoints (0: off).")(f)
    f = click.option("--checkpoint-every", type=int, default=0, show_default=True,
                     help="Updates between checkpoints (0: by time only; a multiple of the "
                          "chunk length). Checkpoints are also written at the end and on "
                          "Ctrl-C/SIGTERM; `rl resume RUN_DIR` continues.")(f)
    return f


def device_options(f: Any) -> Any:
    """--devices and the multi-host start-up options, shared by `rl run` and `rl sweep`."""
    f = click.option("--devices", type=int, default=None,
                     help="Use the first N devices (default: all, members sharded over them).")(f)
    return distributed_options(f)


def distributed_options(f: Any) -> Any:
    """The multi-host start-up options (`rl run`, `rl sweep`, `rl resume`)."""
    f = click.option("--coordinator", default=None, envvar="RL_COORDINATOR_ADDRESS",
                     help="Multi-host: host:port of process 0 (also RL_COORDINATOR_ADDRESS).")(f)
    f = click.option("--num-processes", type=int, default=None, envvar="RL_NUM_PROCESSES",
                     help="Multi-host: how many processes take part (also RL_NUM_PROCESSES).")(f)
    f = click.option("--process-id", type=int, default=None, envvar="RL_PROCESS_ID",
                     help="Multi-host: this process's id, 0 writes the files (also "
                          "RL_PROCESS_ID).")(f)
    f = click.option("--distributed-auto", is_flag=True,
                     help="Multi-host: let JAX detect the cluster from the scheduler's "
                          "environment (SLURM, Open MPI, Kubernetes, ...).")(f)
    return f


def start_distributed(coordinator: str | None, num_processes: int | None,
                      process_id: int | None, distributed_auto: bool) -> None:
    """Starts jax.distributed when asked, before anything else touches JAX."""
    from rl_core import distributed_config, initialize_distributed

    if distributed_auto and any(v is not None for v in (coordinator, num_processes, process_id)):
        raise UserError("--distributed-auto detects the cluster itself; drop --coordinator/"
                        "--num-processes/--process-id (or drop --distributed-auto)")
    try:
        cfg = distributed_config(coordinator, num_processes, process_id, distributed_auto,
                                 environ={})
    except ValueError as e:
        raise UserError(str(e)) from None
    initialize_distributed(cfg)


def env_kwargs(items: tuple[str, ...]) -> dict[str, object]:
    """`--env-arg KEY=VALUE` pairs with their values read as int, float, bool or text."""
    from rl_cli.overrides import parse_assignments

    out: dict[str, object] = {}
    for k, v in parse_assignments(items, "--env-arg").items():
        for conv in (int, float):
            try:
                out[k] = conv(v)
                break
            except ValueError:
                continue
        else:
            out[k] = {"true": True, "false": False}.get(v.lower(), v)
    return out
