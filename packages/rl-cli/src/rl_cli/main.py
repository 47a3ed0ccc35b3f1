"""The `rl` command."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from rl_cli import compile_cache, timings
from rl_cli.arena import arena
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
from rl_cli.evolve_command import evolve
from rl_cli.inspection import COMMANDS
from rl_cli.options import (
    checkpoint_options,
    device_options,
    distributed_options,
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
                   "mean_meta_params.npz of `rl evolve --meta drift` or `--meta ta_lpo`).")
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
@click.option("--config", "config", type=click.Path(path_type=Path), default=None,
              help="A TOML file of these options (the command line wins; `rl algos ALGO "
                   "--preset NAME` prints a preset's settings to start from).")
@click.option("--from", "from_run", type=click.Path(path_type=Path), default=None,
              help="Train anew with the request a run recorded (its config.json); options "
                   "given here change it.")
def run(**given: Any) -> None:
    """Train agents and write TensorBoard events, metrics, checkpoints, a summary and
    parameters. Ctrl-C (or SIGTERM) saves a checkpoint at the next chunk boundary and exits;
    `rl resume RUN_DIR` continues exactly where it stopped."""
    from rl_cli.request import RunRequest
    from rl_cli.run_files import merged
    from rl_cli.runner import execute

    o = merged(click.get_current_context(), given, given["config"], given["from_run"])
    if o["env_id"] is None:
        raise UserError("--env is required (e.g. --env gymnax/CartPole-v1), on the command "
                        "line, in --config or through --from")
    start_distributed(o["coordinator"], o["num_processes"], o["process_id"],
                      o["distributed_auto"])
    req = RunRequest.from_options(o)
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
def sweep(**o: Any) -> None:
    """Sweep traced hyperparameters x seeds in one compiled program; rank the points."""
    if o["env_id"] is None:
        raise UserError("--env is required, e.g. --env gymnax/CartPole-v1")
    from rl_cli.sweep import SweepRequest
    from rl_cli.sweep_runner import execute_sweep

    req = SweepRequest.from_options(o)
    start_distributed(o["coordinator"], o["num_processes"], o["process_id"],
                      o["distributed_auto"])
    execute_sweep(req, o["logdir"], o["run_name"], o["watchdog_seconds"],
                  progress=not o["no_progress"], checkpoint_every=o["checkpoint_every"],
                  checkpoint_minutes=o["checkpoint_minutes"])


for _command in (evolve, arena, *COMMANDS):  # evolve, arena, eval, render, plot, envs, algos
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
