"""The `rl` command."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from rl_cli import compile_cache, timings
from rl_cli.errors import (
    EXIT_HALTED,
    EXIT_IO_ERROR,
    EXIT_USER_ERROR,
    RunHalted,
    RunStopped,
    Terminated,
    UserError,
    describe_os_error,
)
from rl_cli.inspection import COMMANDS
from rl_cli.options import (
    checkpoint_options,
    device_options,
    distributed_options,
    env_kwargs,
    start_distributed,
    total_timesteps_option,
    training_options,
    watchdog_option,
)

timings.mark("import rl_cli")


def _user_errors() -> tuple[type[BaseException], ...]:
    from rl_algos import ConfigError
    from rl_envs import EnvError

    return (UserError, ConfigError, EnvError)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--no-compile-cache", is_flag=True,
              help="Do not use JAX's persistent compilation cache (also: RL_COMPILE_CACHE=0).")
def cli(no_compile_cache: bool) -> None:
    """Pure-JAX reinforcement learning: environment and agent compiled into one program."""
    if not no_compile_cache and compile_cache.enabled_by_env():
        compile_cache.enable()
    timings.mark("import jax, compile cache")


@cli.command()
@training_options(member="agent", run_name="algo-env-time",
                  num_seeds="Independent agents trained at once (vmapped); member i uses seed "
                            "SEED+i.")
@click.option("--data-parallel", is_flag=True,
              help="Split each agent's environments over the devices and average gradients "
                   "(one agent uses the whole machine) instead of sharding members.")
@click.option("--meta-params", type=click.Path(path_type=Path), default=None,
              help="Evolved meta-parameters for algorithms that need them (lpo: the "
                   "mean_meta_params.npz of `rl evolve --meta drift`).")
@click.option("--eval-episodes", default=10, show_default=True, type=int,
              help="Greedy episodes per member played by the final agents, reported in the "
                   "summary beside the training return (0: none).")
@click.option("--halt-on-nan", is_flag=True,
              help="Stop at the first chunk where a metric or parameter becomes NaN/inf "
                   "(exit code 4; the non-finite state is not saved, earlier checkpoints are).")
@click.option("--eval-every", type=int, default=0, show_default=True,
              help="Updates between greedy evaluations during training (--eval-episodes "
                   "episodes each, logged as eval/greedy_return; 0: none; a multiple of the "
                   "chunk length).")
@checkpoint_options
@device_options
def run(algo: str, env_id: str, num_seeds: int, seed: int, total_timesteps: int | None,
        sets: tuple[str, ...], env_args: tuple[str, ...], preset: str | None, logdir: Path,
        run_name: str | None, log_every: int | None, watchdog_seconds: float,
        no_progress: bool, data_parallel: bool, meta_params: Path | None, eval_episodes: int,
        halt_on_nan: bool, checkpoint_every: int, checkpoint_minutes: float, eval_every: int,
        devices: int | None, coordinator: str | None, num_processes: int | None,
        process_id: int | None, distributed_auto: bool) -> None:
    """Train agents and write TensorBoard events, metrics, checkpoints, a summary and
    parameters. Ctrl-C (or SIGTERM) saves a checkpoint at the next chunk boundary and exits;
    `rl resume RUN_DIR` continues exactly where it stopped."""
    from rl_cli.overrides import parse_assignments
    from rl_cli.request import RunRequest
    from rl_cli.runner import execute

    start_distributed(coordinator, num_processes, process_id, distributed_auto)
    req = RunRequest(
        algo=algo, env=env_id, num_seeds=num_seeds, seed=seed, total_timesteps=total_timesteps,
        sets=parse_assignments(sets), env_kwargs=env_kwargs(env_args), preset=preset,
        logdir=logdir, run_name=run_name, log_every=log_every,
        watchdog_seconds=watchdog_seconds, progress=not no_progress, devices=devices,
        data_parallel=data_parallel, meta_params=meta_params, eval_episodes=eval_episodes,
        halt_on_nan=halt_on_nan, checkpoint_every=checkpoint_every,
        checkpoint_minutes=checkpoint_minutes, eval_every=eval_every,
    )
    execute(req)


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@total_timesteps_option("A new total of environment steps per agent (default: the run's own).")
@watchdog_option("the run", default=None)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@distributed_options
def resume(run_dir: Path, total_timesteps: int | None, watchdog_seconds: float | None,
           no_progress: bool, coordinator: str | None, num_processes: int | None,
           process_id: int | None, distributed_auto: bool) -> None:
    """Continue an `rl run` or `rl sweep` from its newest checkpoint, in the same directory:
    metrics and TensorBoard go on without duplicates, and the result is bitwise the one an
    uninterrupted run gives."""
    from rl_cli.resume import check_processes, resume_request, whole_chunks
    from rl_cli.rundir import check_free, read_run_config
    from rl_cli.runner import execute

    run_dir = run_dir.resolve()  # `rl resume .` names the directory by its path
    if run_dir.is_dir():
        check_free(run_dir)  # before anything is read back or written
    record = read_run_config(run_dir, keys=()) if run_dir.is_dir() else {}
    start_distributed(coordinator, num_processes, process_id, distributed_auto)
    check_processes(record)
    if total_timesteps is not None:
        total_timesteps, note = whole_chunks(record, total_timesteps)
        if note:
            click.echo(note)
    if "sweep_request" in record:
        from rl_cli.sweep_runner import execute_sweep, resume_sweep_request

        sweep_req, session = resume_sweep_request(run_dir, record["sweep_request"],
                                                      total_timesteps)
        if watchdog_seconds is not None:
            session["watchdog_seconds"] = watchdog_seconds
        execute_sweep(sweep_req, run_dir.parent, run_dir.name, progress=not no_progress,
                      resume_dir=run_dir, **session)
        return
    req = resume_request(run_dir, total_timesteps, progress=not no_progress,
                         watchdog_seconds=watchdog_seconds)
    execute(req, resume_dir=run_dir)


@cli.command()
@training_options(member="member", run_name="sweep-algo-env-time",
                  num_seeds="Seeds per point; member seeds are SEED..SEED+N-1 at every point.")
@click.option("--grid", "grids", multiple=True, metavar="KEY=V1,V2,...",
              help="Values of one traced hyperparameter (repeatable: the grid is the product).")
@click.option("--sample", "samples", multiple=True, metavar="KEY=DIST:LOW:HIGH",
              help="Random search: DIST is uniform or loguniform (repeatable).")
@click.option("--num-samples", default=1, show_default=True, type=int,
              help="Random points drawn for the --sample keys (seeded by --seed).")
@checkpoint_options
@device_options
def sweep(algo: str, env_id: str, grids: tuple[str, ...], samples: tuple[str, ...],
          num_samples: int, num_seeds: int, seed: int, total_timesteps: int | None,
          sets: tuple[str, ...], env_args: tuple[str, ...], preset: str | None, logdir: Path,
          run_name: str | None, log_every: int | None, watchdog_seconds: float,
          no_progress: bool, checkpoint_minutes: float, checkpoint_every: int,
          devices: int | None, coordinator: str | None, num_processes: int | None,
          process_id: int | None, distributed_auto: bool) -> None:
    """Sweep traced hyperparameters x seeds in one compiled program; rank the points."""
    from rl_cli.overrides import parse_assignments
    from rl_cli.sweep import SweepRequest
    from rl_cli.sweep_points import parse_grid, parse_sample
    from rl_cli.sweep_runner import execute_sweep

    req = SweepRequest(
        algo=algo, env=env_id, grid=parse_grid(grids), sample=parse_sample(samples),
        num_samples=num_samples, num_seeds=num_seeds, seed=seed, total_timesteps=total_timesteps,
        sets=parse_assignments(sets), env_kwargs=env_kwargs(env_args), preset=preset,
        devices=devices, log_every=log_every,
    )
    start_distributed(coordinator, num_processes, process_id, distributed_auto)
    execute_sweep(req, logdir, run_name, watchdog_seconds, progress=not no_progress,
                  checkpoint_every=checkpoint_every, checkpoint_minutes=checkpoint_minutes)


@cli.command()
@click.option("--meta", default=None, help="What to evolve: drift (LPO) or value_loss "
              "[default: drift].")
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


for _command in COMMANDS:  # eval, render, plot, envs, algos
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every failure becomes one line on stderr and a non-zero exit: 2 for bad
    input, 1 for a read or write the system refused, 3 the watchdog, 4 `--halt-on-nan`,
    130/143 a stop by SIGINT/SIGTERM."""
    try:
        cli.main(args=argv, prog_name="rl", standalone_mode=False)
        timings.report()
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.UsageError as e:  # a wrong option or value: one line, as for any bad input
        hint = f" (see 'rl {e.ctx.info_name} --help')" if e.ctx is not None and e.ctx.parent \
            else " (see 'rl --help')"
        sys.stderr.write(f"rl: error: {' '.join(e.format_message().split())}{hint}\n")
        sys.exit(EXIT_USER_ERROR)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except (click.Abort, KeyboardInterrupt) as e:
        # Ctrl-C before training or after it (compiling, evaluating): one line. Further copies
        # of it (`uv run` forwards the terminal's) must not interrupt the exit with a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.stderr.write("rl: aborted\n" if isinstance(e, click.Abort) else "rl: interrupted\n")
        sys.exit(130)
    except Terminated:
        sys.stderr.write("rl: terminated\n")
        sys.exit(143)
    except _user_errors() as e:
        sys.stderr.write(f"rl: error: {e}\n")
        sys.exit(EXIT_USER_ERROR)
    except BrokenPipeError:  # the reader of stdout went away (`rl envs | head`): nothing to say
        sys.exit(EXIT_IO_ERROR)
    except OSError as e:  # disk full, read-only, permissions: the system said no
        sys.stderr.write(f"rl: error: {describe_os_error(e)}\n")
        sys.exit(EXIT_IO_ERROR)
    except RunHalted as e:
        sys.stderr.write(f"rl: error: {e}\n")
        sys.exit(EXIT_HALTED)
    except RunStopped as e:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # `uv run`'s copy of the Ctrl-C: ignored
        sys.stderr.write(f"rl: {e}\n")
        sys.exit(e.exit_code)


def entry() -> None:
    """The `rl` console script: `main` with the garbage collector paused through start-up
    (`rl_cli.startup`), then the process ends at once. What the interpreter's
    own shutdown would do after that (tearing down every module and JAX's runtime, half a second
    to seconds) is skipped: `rl` has written and closed everything by then. Other threads that
    are not daemons are waited for, the `atexit` handlers run (JAX's multi-host shutdown among
    them) and the standard streams are flushed first. An unexpected exception ends the process
    as usual, with its traceback."""
    import atexit
    import os

    from rl_cli.startup import pause_gc

    pause_gc()  # until the programs are compiled (rl_cli.startup)
    try:
        main()
        code = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            sys.stderr.write(f"{e.code}\n")
            code = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # e.g. stdout was a pipe closed by its reader
    os._exit(code)


if __name__ == "__main__":
    entry()
