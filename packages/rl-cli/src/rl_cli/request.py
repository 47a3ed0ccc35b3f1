"""A training request and its preparation, the first step of `rl run`, `rl sweep` and
`rl resume`: the request as the user gave it, resolved into the environment, the algorithm's
declaration, its config and hyperparameters and the built algorithm, every input validated
before anything compiles or touches the disk."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from rl_cli import timings
from rl_cli.capacity import check_member_count
from rl_cli.errors import UserError
from rl_cli.overrides import as_jsonable, build_config
from rl_cli.rundir import check_output
from rl_cli.trackers import check_tracker


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
    track: str | None = None  # an experiment tracker beside TensorBoard (rl_cli.trackers)

    @classmethod
    def from_options(cls, o: dict[str, Any]) -> RunRequest:
        """The request of `rl run`'s parsed options `o` (click's parameter names; see
        `OPTION_NAMES`): `--set`/`--env-arg` pairs parsed, `--no-progress` turned round."""
        values = option_values(cls, o)
        values["progress"] = not values["progress"]
        return cls(**values)


# The request fields that the options of `rl run` and `rl sweep` name otherwise (click's
# parameter names); every other field is its option's name. `--config` files and `--from`
# records go through the same.
OPTION_NAMES = {"env": "env_id", "env_kwargs": "env_args", "progress": "no_progress",
                "grid": "grids", "sample": "samples"}


def option_name(field_name: str) -> str:
    return OPTION_NAMES.get(field_name, field_name)


def option_values(request_class: Any, o: dict[str, Any]) -> dict[str, Any]:
    """Each field of the dataclass `request_class` (`RunRequest`, `SweepRequest`) from its
    option in `o`, the options that `training_options` declares for both parsed: `--set` into
    `{key: text}`, `--env-arg` into typed values. Errors name the option."""
    from rl_cli.options import env_kwargs
    from rl_cli.overrides import parse_assignments

    values = {f.name: o[option_name(f.name)] for f in fields(request_class)}
    values["sets"] = parse_assignments(values["sets"])
    values["env_kwargs"] = env_kwargs(values["env_kwargs"])
    return values


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
    env_id: str = ""

    def judge_env(self) -> Any:
        """The environment that greedy evaluations play (`--eval-every`, the final one): the
        training one, except in self-play, where the adapter's default opponent (pgx: random)
        takes the other seat, as `rl eval` plays it."""
        if not getattr(self.env, "self_play", False):
            return self.env
        import rl_envs

        judged = rl_envs.against(self.env_id, self.env_kwargs, None)
        return self.env if judged is None else rl_envs.make(self.env_id, **judged[0])


def prepare(req: RunRequest) -> Prepared:
    import rl_algos
    import rl_envs

    if req.num_seeds < 1:
        raise UserError(f"--num-seeds must be >= 1, got {req.num_seeds}")
    check_member_count(req.num_seeds)
    if req.total_timesteps is not None and req.total_timesteps < 1:
        raise UserError(f"--total-timesteps must be >= 1, got {req.total_timesteps}")
    check_tracker(req.track)
    if req.eval_episodes < 0:
        raise UserError(f"--eval-episodes must be >= 0 (0: no evaluation), got "
                        f"{req.eval_episodes}")
    check_output(req.logdir, req.run_name)
    timings.mark("import rl_algos, rl_envs")
    spec = rl_algos.get(req.algo)
    env = rl_envs.make(req.env, **req.env_kwargs)
    timings.mark("environment (imports its library)")
    spec.check_env(env, rl_algos.multi_agent_names())
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
    return Prepared(spec, env, config, hparams, preset, algorithm, env_kwargs, req.env)


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
    """The hyperparameters for config.json: meta-parameters appear as the file they came from,
    by its absolute path (as the request records it: a resume from another directory finds it,
    and rebuilds the same record)."""
    record = as_jsonable(hparams)
    if spec.meta_field is not None:
        record[spec.meta_field] = str(meta_params if meta_params is None
                                      else Path(meta_params).resolve())
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


def request_record(req: RunRequest, chunk_len: int) -> dict[str, Any]:
    """What `rl resume` needs to rebuild the same run: the request as given, made JSON-able,
    with the chunk length fixed (a resumed run must cut its chunks at the same updates)."""
    record = {f.name: getattr(req, f.name) for f in fields(RunRequest)}
    record.update(logdir=str(req.logdir), log_every=chunk_len,
                  meta_params=None if req.meta_params is None
                  else str(Path(req.meta_params).resolve()))  # found from any directory
    return record


def member_keys(seeds: list[int]) -> Any:
    """`[M, 2]` keys, `jax.random.PRNGKey(seed)` of each member: for many members in one
    vmapped call (the same keys) instead of one dispatch per member."""
    import jax
    import jax.numpy as jnp

    if len(seeds) <= 16 or not 0 <= min(seeds) <= max(seeds) < 2**31:
        return jnp.stack([jax.random.PRNGKey(s) for s in seeds])
    return jax.vmap(jax.random.PRNGKey)(jnp.asarray(np.asarray(seeds, np.int32)))
