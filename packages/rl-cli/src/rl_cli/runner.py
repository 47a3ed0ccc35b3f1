"""`rl run`: the composition root. Resolves the environment and the algorithm, validates every
input before anything compiles or touches the disk, then compiles, trains, logs and saves."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from rl_cli import timings
from rl_cli.capacity import check_capacity, check_member_count
from rl_cli.checkpoint import ResumePoint, check_cadence, checkpointer_for, latest_checkpoint
from rl_cli.errors import UserError
from rl_cli.health import HealthMonitor, NonFiniteHalt
from rl_cli.overrides import as_jsonable, build_config
from rl_cli.plots import write_curves
from rl_cli.reporting import RunLogger, summary_table
from rl_cli.session import check_output, new_run_dir, train_members
from rl_cli.stats import final_returns, mean_ci95
from rl_cli.watchdog import Watchdog
from rl_core import FINAL_RETURN_DEFINITION


@dataclass
class RunRequest:
    algo: str
    env: str
    num_seeds: int = 1
    seed: int = 0
    total_timesteps: int | None = None
    sets: dict[str, str] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    preset: str | None = None  # None: chosen from the environment
    logdir: Path = Path("runs")
    run_name: str | None = None
    log_every: int | None = None
    watchdog_seconds: float = 600.0
    progress: bool = True
    devices: int | None = None  # None: every device (members sharded over them)
    data_parallel: bool = False  # one agent's environments split over the devices
    meta_params: Path | None = None  # evolved meta-parameters (algorithms with a meta_field)
    eval_episodes: int = 10  # greedy episodes per member after training (0: none)
    halt_on_nan: bool = False  # stop at the first chunk with NaN/inf (exit code 4)
    checkpoint_every: int = 0  # updates between checkpoints (0: only by time, signal and end)
    checkpoint_minutes: float = 10.0  # minutes of training between checkpoints (0: off)
    eval_every: int = 0  # updates between greedy evaluations during training (0: none)


@dataclass
class Prepared:
    """Everything validated and built, nothing compiled, nothing written."""

    spec: Any
    env: Any
    config: Any
    hparams: Any
    preset: str | None
    algorithm: Any
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # as built, preset defaults included


def prepare(req: RunRequest) -> Prepared:
    import rl_algos
    import rl_envs

    if req.num_seeds < 1:
        raise UserError(f"--num-seeds must be >= 1, got {req.num_seeds}")
    check_member_count(req.num_seeds)
    if req.total_timesteps is not None and req.total_timesteps < 1:
        raise UserError(f"--total-timesteps must be >= 1, got {req.total_timesteps}")
    if req.eval_episodes < 0:
        raise UserError(f"--eval-episodes must be >= 0 (0: no evaluation), got "
                        f"{req.eval_episodes}")
    check_output(req.logdir, req.run_name)
    timings.mark("import rl_algos, rl_envs")
    spec = rl_algos.get(req.algo)
    env = rl_envs.make(req.env, **req.env_kwargs)
    timings.mark("environment (imports its library)")
    spec.check_env(env)
    preset = req.preset if req.preset is not None else spec.default_preset(
        rl_envs.family(req.env), env.action_space)
    if preset == "none":
        preset = None
    env, env_kwargs = apply_env_preset(spec, preset, env, req)
    config, hparams = build_config(spec, preset, req.sets, req.total_timesteps)
    hparams = with_meta_params(spec, hparams, req.meta_params)
    algorithm = build_algorithm(spec, env, config, req)
    if req.log_every is not None and (req.log_every < 1
                                      or algorithm.num_updates % req.log_every):
        raise UserError(f"--log-every {req.log_every} must divide the number of updates "
                        f"({algorithm.num_updates}); a resumed run keeps its chunk length, so "
                        "its --total-timesteps must give a multiple of it")
    timings.mark("config, algorithm")
    return Prepared(spec, env, config, hparams, preset, algorithm, env_kwargs)


def apply_env_preset(spec: Any, preset: str | None, env: Any,
                     req: RunRequest) -> tuple[Any, dict[str, Any]]:
    """The environment with the preset's environment defaults (e.g. PQN's board-game preset
    trains against the mixed random/greedy opponent) under the user's `--env-arg`s. A game that
    does not take them (no greedy opponent for othello) keeps its own defaults."""
    import rl_envs

    env_defaults = spec.presets[preset].env if preset in spec.presets else {}
    extra = {k: v for k, v in env_defaults.items() if k not in req.env_kwargs}
    if not extra:
        return env, dict(req.env_kwargs)
    kwargs = {**extra, **req.env_kwargs}
    try:
        return rl_envs.make(req.env, **kwargs), kwargs
    except rl_envs.EnvError:
        return env, dict(req.env_kwargs)


def with_meta_params(spec: Any, hparams: Any, path: Path | None) -> Any:
    """Fills the algorithm's meta-parameter field (LPO's drift) from `--meta-params`; refuses a
    missing file for an algorithm that needs one, and a file for one that has no such field."""
    from rl_cli.meta_params import load_meta_params

    if spec.meta_field is None:
        if path is not None:
            users = ", ".join(a.name for a in _algorithms() if a.meta_field) or "none"
            raise UserError(f"--meta-params only applies to algorithms with an evolved component "
                            f"({users}); drop it for {spec.name}")
        return hparams
    if path is None:
        raise UserError(f"{spec.name} trains with an evolved {spec.meta_target}: use "
                        f"`rl run --algo {spec.name} --meta-params FILE` with FILE the "
                        f"mean_meta_params.npz of `rl evolve --meta {spec.meta_target}` "
                        f"(rl sweep does not take meta-parameters)")
    return hparams._replace(**{spec.meta_field: load_meta_params(path, spec.meta_target)})


def _algorithms() -> list[Any]:
    import rl_algos

    return list(rl_algos.ALGORITHMS.values())


def hparams_record(spec: Any, hparams: Any, meta_params: Path | None) -> dict[str, Any]:
    """The hyperparameters for config.json: meta-parameters appear as the file they came from."""
    record = as_jsonable(hparams)
    if spec.meta_field is not None:
        record[spec.meta_field] = str(meta_params)
    return record


def check_devices(devices: int | None) -> int:
    """The number of devices to use (all of them by default); a bad `--devices` is a UserError."""
    import jax

    available = jax.device_count()
    if devices is None:
        return available
    if devices < 1 or devices > available:
        raise UserError(f"--devices must be between 1 and {available} (the devices JAX sees: "
                        f"{jax.devices()[0].platform} x{available}), got {devices}")
    if jax.process_count() > 1 and devices != available:
        raise UserError(f"with {jax.process_count()} processes every device takes part; "
                        f"drop --devices (or set it to {available})")
    return devices


def member_mesh_for(devices: int | None) -> Any:
    """A member mesh over the chosen devices, or None when there is only one (the plain
    single-device program)."""
    from rl_core import member_mesh

    n = check_devices(devices)
    return member_mesh(n) if n > 1 else None


def build_algorithm(spec: Any, env: Any, config: Any, req: RunRequest) -> Any:
    """The algorithm, or with `--data-parallel` its data-parallel form over this host's devices."""
    import jax

    if req.devices is not None:
        check_devices(req.devices)
    if not req.data_parallel:
        return spec.make_algorithm(env, config)
    if not spec.data_parallel:
        names = ", ".join(a.name for a in _algorithms() if a.data_parallel)
        raise UserError(f"{spec.name} has no data-parallel mode ({names} have); drop "
                        "--data-parallel")
    if jax.process_count() > 1:
        raise UserError("--data-parallel splits one agent over one host's devices; with several "
                        "processes shard members instead (drop --data-parallel)")
    from rl_core import DATA_AXIS, DataAxis, data_mesh, data_parallel

    n = req.devices or jax.local_device_count()
    local = spec.make_algorithm(env, config, data_axis=DataAxis(DATA_AXIS, n))
    return data_parallel(local, data_mesh(n))


def final_agents(algo: Any, carry: Any) -> Any:
    """The agent of every member (`Algorithm.agent` of each member's final carry: parameters and,
    when training normalised observations, their statistics; leading `[M]` axis)."""
    import jax

    return jax.vmap(algo.agent)(carry)


def save_agents(path: Path, agents: Any) -> None:
    """Every member's agent (`final_agents`) in Equinox's leaf serialisation:
    `eqx.tree_deserialise_leaves(path, like)` loads it into the member-stacked
    `make_policy(env, config).agent_like` (`rl_cli.evaluate.load_agent` does)."""
    import equinox as eqx

    eqx.tree_serialise_leaves(path, agents)


def execute(req: RunRequest, console: Console | None = None,
            resume_dir: Path | None = None) -> dict[str, Any]:
    """Runs a validated request end to end, or with `resume_dir` continues that run from its
    newest checkpoint (`rl resume`); returns the summary written to summary.json."""
    console = console or Console(stderr=False)
    prep = prepare(req)  # every user mistake surfaces here, before any file or compile

    import jax
    import jax.numpy as jnp

    from rl_algos.common import hparams_as_arrays
    from rl_core import chunk_length, is_main_process

    main = is_main_process()  # only process 0 writes files and prints
    if not main:
        console = Console(quiet=True)
    mesh = None if req.data_parallel else member_mesh_for(req.devices)
    algo, n = prep.algorithm, req.num_seeds
    chunk_len = req.log_every or chunk_length(algo.num_updates)
    check_cadence(req.checkpoint_every, req.checkpoint_minutes, req.eval_every, chunk_len,
                  algo.num_updates)
    hp_one = hparams_as_arrays(prep.hparams)
    seeds = [req.seed + i for i in range(n)]
    names = [f"seed_{s}" for s in seeds]
    keys = member_keys(seeds)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *x.shape)), hp_one)
    total_steps = algo.num_updates * algo.steps_per_update
    info = {"algo": req.algo, "env": req.env, "num_members": n,
            "num_updates": algo.num_updates}
    point = None
    if resume_dir is not None:
        point = resume_point(resume_dir, algo, keys, hp, info, console)
    with console.status("checking that the members fit in memory…", spinner="dots"):
        est = check_capacity(algo, hp_one, chunk_len, n if mesh is None else
                             -(-n // int(mesh.devices.size)))
    if est is not None:
        console.print(f"memory: about {est.need(n) / 2**30:.2f} GiB for {n:,} members, of "
                      f"{est.available_bytes / 2**30:.1f} GiB {est.where} available (at most "
                      f"{est.max_members():,} members fit; measured in {est.seconds:.1f} s)")

    config_record = {
        "algo": req.algo, "env": req.env, "env_kwargs": prep.env_kwargs, "preset": prep.preset,
        "num_seeds": n, "seeds": seeds, "config": as_jsonable(prep.config),
        "hparams": hparams_record(prep.spec, prep.hparams, req.meta_params),
        "num_updates": algo.num_updates,
        "steps_per_update": algo.steps_per_update, "log_every_updates": chunk_len,
        "jax_version": jax.__version__, "devices": [str(d) for d in jax.devices()],
        "process_count": jax.process_count(),
        "parallelism": parallelism(mesh, req.data_parallel, req.devices),
        "command": sys.argv,
        "request": request_record(req, chunk_len),
    }
    run_dir = None
    if main:
        run_dir = resume_dir or new_run_dir(req.logdir, f"{req.algo}-{req.env}", req.run_name)
        if point is not None:
            config_record.update(resumed_record(run_dir, point))
        write_atomic(run_dir / "config.json", json.dumps(config_record, indent=2))
    done = 0 if point is None else point.updates_done
    console.print(f"[bold]{req.algo}[/] on [bold]{req.env}[/] · {n} seed(s) · "
                  f"{total_steps:,} steps each · preset {prep.preset or 'none'} · "
                  f"{config_record['parallelism']} · run dir {run_dir}"
                  + (f" · resuming at update {done}/{algo.num_updates}" if point else ""))

    timings.mark("members, capacity check, config.json")
    logger = None
    if run_dir is not None:
        logger = RunLogger(run_dir, names, algo.steps_per_update,
                           resume_at=None if point is None else done,
                           elapsed_offset=0.0 if point is None else point.elapsed)
    health = HealthMonitor(names, halt_on_nan=req.halt_on_nan)
    evaluator = PeriodicEval(prep.env, algo, req, logger) if req.eval_every else None
    ckpt = checkpointer_for(run_dir, info, req.checkpoint_every, req.checkpoint_minutes,
                            req.eval_every, evaluator, warn=console.print)
    timings.mark("TensorBoard writer, metrics.jsonl open")
    after = AfterTraining(plots=run_dir is not None, evaluation=(
        prep.env, algo, keys, hp, req.eval_episodes, req.seed)
        if req.eval_episodes and main else None)
    with Watchdog(req.watchdog_seconds) as dog, after:
        try:
            trained = train_members(algo, keys, hp, chunk_len, mesh, console=console,
                                    logger=logger, dog=dog, health=health, checkpointer=ckpt,
                                    progress=req.progress, run_dir=run_dir, start=point,
                                    on_compiled=after.start)
        except NonFiniteHalt as halt:
            _record_halt(run_dir, logger, req, n, seeds, health, halt)
            raise
        result, run_seconds = trained.result, trained.run_seconds
        dog.beat("saving results")
        agents = final_agents(algo, result.state)
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
        if req.eval_episodes and main:
            dog.beat(f"evaluating: {req.eval_episodes} greedy episodes per member")
            greedy = final_evaluation(prep.env, algo.policy, agents, req.eval_episodes, req.seed,
                                      compiled=after.play)
            timings.mark("final greedy evaluation")

    finals = final_returns(np.asarray(result.metrics["episode_return_sum"]),
                           np.asarray(result.metrics["episode_count"]))
    mean, ci = mean_ci95(finals)
    summary = {
        "algo": req.algo, "env": req.env, "num_members": n, "seeds": seeds,
        "final_return_per_member": [None if not np.isfinite(r) else float(r) for r in finals],
        "final_return_mean": None if not np.isfinite(mean) else mean,
        "final_return_ci95": None if not np.isfinite(ci) else ci,
        "final_return_definition": FINAL_RETURN_DEFINITION,
        **(greedy or {}),
        "total_timesteps": total_steps,
        "compile_seconds": trained.compile_seconds,
        "run_seconds": run_seconds,
        "steps_per_second": n * (total_steps - done * algo.steps_per_update)
        / max(run_seconds, 1e-9),
        **({"resumed_from_update": done} if point is not None else {}),
        "checkpoint": str(trained.checkpoint or (point.path if point else None) or "") or None,
        "run_dir": str(run_dir),
        **health.summary(),
    }
    if run_dir is not None:
        write_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    timings.mark("summary.json")
    console.print(summary_table(names, finals, summary,
                                {n: h.status for n, h in health.flagged()}))
    timings.mark("summary table")
    return summary


def request_record(req: RunRequest, chunk_len: int) -> dict[str, Any]:
    """What `rl resume` needs to rebuild the same run: the request as given, made JSON-able,
    with the chunk length fixed (a resumed run must cut its chunks at the same updates)."""
    record = {f.name: getattr(req, f.name) for f in fields(RunRequest)}
    record.update(logdir=str(req.logdir), log_every=chunk_len,
                  meta_params=None if req.meta_params is None else str(req.meta_params))
    return record


def read_config(run_dir: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((run_dir / "config.json").read_text()))
    except (OSError, json.JSONDecodeError, TypeError, ValueError) as e:
        raise UserError(f"'{run_dir}/config.json' is missing or unreadable ({e}); pass the "
                        "directory of an `rl run`") from None


def check_processes(record: dict[str, Any]) -> None:
    """A run resumes with as many processes as it ran with (each holds its share of members)."""
    import jax

    ran = record.get("process_count", 1)
    if ran != jax.process_count():
        raise UserError(f"this run trained with {ran} process(es); resume it with the same "
                        f"number (now {jax.process_count()}: pass the same --coordinator/"
                        "--num-processes/--process-id to each)")


def resume_request(run_dir: Path, total_timesteps: int | None = None,
                   progress: bool = True, watchdog_seconds: float | None = None) -> RunRequest:
    """The `RunRequest` recorded in `run_dir/config.json` (a run started by `rl run`), with a new
    total of environment steps if given."""
    if not run_dir.is_dir():
        what = "is a file, not a directory" if run_dir.exists() else "does not exist"
        raise UserError(f"run directory '{run_dir}' {what}; pass the directory of an `rl run` "
                        "(runs/<algo>-<env>-<time>)")
    record = read_config(run_dir).get("request")
    if not isinstance(record, dict):
        raise UserError(f"'{run_dir}/config.json' records no request: it was not written by "
                        "`rl run` or `rl sweep` (an `rl evolve` run continues with "
                        "`rl evolve --resume`)")
    try:
        req = RunRequest(**record)
    except TypeError as e:
        raise UserError(f"'{run_dir}/config.json' records a request this version cannot read "
                        f"({e})") from None
    req.logdir, req.run_name = run_dir.parent, run_dir.name
    req.meta_params = None if req.meta_params is None else Path(req.meta_params)
    req.progress = progress
    if watchdog_seconds is not None:
        req.watchdog_seconds = watchdog_seconds
    if total_timesteps is not None:
        req.total_timesteps = total_timesteps
    return req


def resume_point(run_dir: Path, algo: Any, keys: Any, hp: Any, info: dict[str, Any],
                 console: Console) -> ResumePoint:
    """The newest usable checkpoint of `run_dir`, checked against the rebuilt run."""
    import jax

    like = jax.eval_shape(jax.vmap(algo.init), keys, hp)
    state, header, path = latest_checkpoint(
        run_dir, like, warn=lambda line: console.print(line, style="bold yellow", markup=False))
    for key in ("algo", "env", "num_members"):
        if header.get(key) != info[key]:
            raise UserError(f"{path} belongs to another run ({key} {header.get(key)!r}, this "
                            f"run's {info[key]!r})")
    done, total = state.updates_done, algo.num_updates
    if done > total:
        raise UserError(f"{path} is at update {done}, past this run's {total} updates; pass a "
                        "--total-timesteps of at least what the run has already done")
    if done == total and (run_dir / "summary.json").is_file():
        raise UserError(f"'{run_dir}' has finished all its {total} updates; to train further "
                        "pass a larger --total-timesteps")
    console.print(f"resuming from {path} (update {done}/{total})")
    return ResumePoint(state, header, path)


def resumed_record(run_dir: Path, point: ResumePoint) -> dict[str, Any]:
    """config.json's fields of a resumed run: the command that started it, and every resume."""
    old = read_config(run_dir)
    return {"command": old.get("command"), "resumed": old.get("resumed", []) + [
        {"from_update": point.updates_done, "command": sys.argv}]}


def write_atomic(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file and a rename: readers see the old file
    or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class PeriodicEval:
    """`--eval-every`: at those chunk boundaries the agents play `--eval-episodes` greedy episodes
    on a separate copy of the environment (the program compiled once, at the first one); the
    mean per member goes to TensorBoard (`eval/greedy_return/...`) and to metrics.jsonl. The
    training's own random stream is untouched, so evaluating does not change the run."""

    def __init__(self, env: Any, algo: Any, req: RunRequest, logger: Any):
        self.env, self.algo, self.req, self.logger = env, algo, req, logger
        self.play: Any = None

    def __call__(self, state: Any) -> None:
        import jax

        from rl_cli.evaluate import compile_play

        agents = jax.vmap(self.algo.agent)(state.carry)
        if self.play is None:
            self.play = compile_play(self.env, self.algo.policy, agents,
                                     max(1, self.req.eval_episodes), self.req.seed)
        played = self.play(agents)
        per_member = np.array([mean_ci95(r)[0] for r in played.returns])
        if self.logger is not None:
            self.logger.log_eval(state.updates_done, per_member)


def final_evaluation(env: Any, policy: Any, agents: Any, episodes: int,
                     seed: int, compiled: Any = None) -> dict[str, Any]:
    """The final agents' greedy evaluation for summary.json: `episodes` whole episodes per
    member on a fresh copy of the training environment, acting through the algorithm's policy
    (what `rl eval` does with the saved agents), beside the training return of the exploring
    behaviour policy."""
    from rl_cli.evaluate import play_episodes

    played = play_episodes(env, policy, agents, episodes, seed, compiled=compiled)
    per_member = [mean_ci95(r)[0] for r in played.returns]
    mean, ci = mean_ci95(np.array(per_member))
    return {
        "greedy_eval_return_per_member": [float(r) if np.isfinite(r) else None
                                          for r in per_member],
        "greedy_eval_mean": float(mean) if np.isfinite(mean) else None,
        "greedy_eval_ci95": float(ci) if np.isfinite(ci) else None,
        "greedy_eval_episodes": episodes,
        "greedy_eval_seconds": played.compile_seconds + played.run_seconds,
    }


class AfterTraining:
    """What follows training, prepared in a background thread while the compiled program trains
    (on CPU its XLA threads leave the host about a core, and the main thread mostly waits for
    chunks): matplotlib imported and its fonts loaded for curves.png (`plots`), and the final
    greedy evaluation's program compiled for agents shaped like the run's (`evaluation`). It
    starts once the training program is compiled (before, it would compete with compiling for
    the interpreter). `join` waits for it; whatever did not get done or failed there is done in
    the main thread afterwards, as without it, with the same results. As a context manager it
    is joined on leaving, also when the run stops early: a thread still inside JAX's C++ code
    when the interpreter shuts down would abort the process."""

    def __init__(self, plots: bool, evaluation: Any = None):
        """`evaluation`: `(env, algo, keys, hparams, episodes, seed)` or None."""
        import threading

        self.plots, self.evaluation = plots, evaluation
        self.play: Any = None  # `compile_play`'s result for the final agents
        self._thread = threading.Thread(target=self._run, name="rl-after-training")

    def __enter__(self) -> AfterTraining:
        return self

    def __exit__(self, *exc: object) -> None:
        self.join()

    def start(self) -> None:
        if self.plots or self.evaluation is not None:
            self._thread.start()

    def join(self) -> None:
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            if self.plots:
                from rl_cli.plots import warm_up

                warm_up()
            if self.evaluation is not None:
                import jax

                from rl_cli.evaluate import compile_play

                env, algo, keys, hparams, episodes, seed = self.evaluation
                carry = jax.eval_shape(jax.vmap(algo.init), keys, hparams)
                agents = jax.eval_shape(lambda c: final_agents(algo, c), carry)
                self.play = compile_play(env, algo.policy, agents, episodes, seed)
        except Exception:  # noqa: BLE001 - done again in the main thread, where errors show
            pass


def _record_halt(run_dir: Path | None, logger: Any, req: RunRequest, n: int, seeds: list[int],
                 health: HealthMonitor, halt: NonFiniteHalt) -> None:
    """What a run stopped by `--halt-on-nan` leaves: its metrics so far and a summary.json that
    says why it stopped (no parameters: they are not finite, and checkpoints do not exist)."""
    if logger is None or run_dir is None:
        return
    logger.close()
    summary = {"algo": req.algo, "env": req.env, "num_members": n, "seeds": seeds,
               "halted": str(halt), "run_dir": str(run_dir), **health.summary()}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))


def member_keys(seeds: list[int]) -> Any:
    """`[M, 2]` keys, `jax.random.PRNGKey(seed)` of each member: for many members in one
    vmapped call (the same keys) instead of one dispatch per member."""
    import jax
    import jax.numpy as jnp

    if len(seeds) <= 16 or not 0 <= min(seeds) <= max(seeds) < 2**31:
        return jnp.stack([jax.random.PRNGKey(s) for s in seeds])
    return jax.vmap(jax.random.PRNGKey)(jnp.asarray(np.asarray(seeds, np.int32)))


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
