"""`rl evolve`: meta-evolution of a part of PPO (its drift, i.e. LPO, or its value loss).

Every generation, an evosax strategy proposes `P` meta-parameter vectors; each trains PPO agents
from scratch (`S` inner seeds per environment) with them, all in one compiled program whose `[P]`
meta-parameters are a traced input (sharded over the devices when there are several); the
agents' final returns give the fitness the strategy is told. After every generation the run
directory gets the strategy's full state (`checkpoint.npz`), the best meta-parameters so far
(`best_meta_params.npz`: the best single member, selected on a noisy fitness) and the strategy's
mean (`mean_meta_params.npz`: the centre of the search distribution, usually the more reliable
choice for `rl run --algo lpo --meta-params`), one line of `history.jsonl`, TensorBoard scalars
and the plots (`fitness.png`; `meta_function.png` for the mean, `meta_function_best.png` for the
best member), so a run can be stopped at any time and continued with `rl evolve --resume DIR`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rl_cli.errors import UserError
from rl_cli.evolve_records import (
    SETTINGS,
)
from rl_core import FINAL_RETURN_WINDOW

BEST, MEAN = "best_meta_params.npz", "mean_meta_params.npz"


@dataclass
class EvolveRequest:
    """Everything that defines an evolution run (saved as evolve.json, reloaded by --resume)."""

    meta: str = "drift"
    algo: str = "ppo"
    envs: list[str] = field(default_factory=lambda: ["gymnax/CartPole-v1"])
    strategy: str = "open_es"
    population: int = 16
    generations: int = 10
    inner_seeds: int = 2
    total_timesteps: int = 50_000  # per inner agent
    hidden: int = 32
    sigma: float = 0.1
    es_lr: float = 0.05
    init_scale: float = 0.5
    seed: int = 0
    sets: dict[str, str] = field(default_factory=dict)
    preset: str | None = None
    baseline: bool = True  # train hand-designed PPO on each generation's inner seeds as well
    normalise: bool | None = None  # fitness relative to that baseline (default: several envs)
    window: float = FINAL_RETURN_WINDOW  # fraction of the last updates scoring an agent
    devices: int | None = None

    @property
    def normalised(self) -> bool:
        return len(self.envs) > 1 if self.normalise is None else self.normalise


@dataclass
class EvolvePlan:
    """Validated and built, nothing compiled or written."""

    req: EvolveRequest
    target: Any
    envs: list[Any]
    config: Any
    hparams: Any  # PPO's hparams (the target adds its meta-parameters)
    strategy: Any
    template: Any  # meta-parameters at the start (the strategy's initial mean)
    mesh: Any


def plan(req: EvolveRequest) -> EvolvePlan:
    """Checks every input and builds the pieces; raises UserError/ConfigError with the fix."""
    import jax

    import rl_algos
    import rl_envs
    from rl_algos import evolve
    from rl_cli.overrides import build_config
    from rl_cli.request import member_mesh_for

    try:
        import evosax  # noqa: F401  (imported by the strategies; checked here for the message)
    except ImportError as e:
        raise UserError(f"rl evolve needs evosax 0.3 ({e}); install it with "
                        f"`pip install 'jaxrlkit-algos[evolve]'`") from None
    if req.algo != "ppo":
        raise UserError(f"rl evolve evolves parts of PPO: --algo must be ppo, got '{req.algo}'")
    for name, value, low in (("--population", req.population, 2),
                             ("--generations", req.generations, 1),
                             ("--inner-seeds", req.inner_seeds, 1),
                             ("--hidden", req.hidden, 1), ("--total-timesteps",
                                                            req.total_timesteps, 1)):
        if value < low:
            raise UserError(f"{name} must be >= {low}, got {value}")
    for name, fvalue in (("--sigma", req.sigma), ("--es-lr", req.es_lr)):
        if not fvalue > 0:
            raise UserError(f"{name} must be > 0, got {fvalue}")
    if not 0 < req.window <= 1:
        raise UserError(f"--window must be in (0, 1], got {req.window}")
    if not req.envs:
        raise UserError("give at least one --env")
    if len(set(req.envs)) != len(req.envs):
        raise UserError(f"an --env is repeated: {req.envs}")
    if req.normalised and not req.baseline:
        raise UserError("normalised fitness is relative to PPO's baseline return: drop "
                        "--no-baseline (or pass --no-normalise)")
    target = evolve.get_target(req.meta)
    spec = rl_algos.get("ppo")
    envs = [rl_envs.make(e) for e in req.envs]
    for env in envs:
        spec.check_env(env)
    presets = {spec.default_preset(rl_envs.family(e), env.action_space)
               for e, env in zip(req.envs, envs, strict=True)}
    preset = req.preset
    if preset is None:
        if len(presets) > 1:
            raise UserError(f"these environments default to different presets "
                            f"({', '.join(sorted(str(p) for p in presets))}); the inner agents "
                            f"share one configuration: pass --preset")
        preset = presets.pop()
    if preset == "none":
        preset = None
    config, hparams = build_config(spec, preset, req.sets, req.total_timesteps)
    strategy = evolve.make_strategy(req.strategy, req.population,
                                    target.init(jax.random.PRNGKey(0), req.hidden, 1.0),
                                    req.sigma, req.es_lr)
    template = target.init(jax.random.fold_in(jax.random.PRNGKey(req.seed), 1), req.hidden,
                           req.init_scale)
    return EvolvePlan(req, target, envs, config, hparams, strategy, template,
                      member_mesh_for(req.devices))


# --------------------------------------------------------------------------- compiled programs


def compile_programs(p: EvolvePlan, with_baseline: bool) -> tuple[Any, Any, float]:
    """`(evaluate, baseline, compile_seconds)`: `evaluate(population, keys[E, S]) -> returns
    [P, E, S]` compiled once for the padded population (sharded over the mesh's devices when
    there is one), `baseline(keys) -> [E, S]` (None unless `with_baseline`)."""
    import jax

    from rl_algos import evolve

    req = p.req
    e, s = len(p.envs), req.inner_seeds
    evaluate = evolve.make_evaluate(p.target, p.envs, p.config, p.hparams, req.window)
    pop_shape = jax.eval_shape(lambda k: p.strategy.es.ask(
        k, evolve.initial_state(p.strategy, k, p.template), p.strategy.params)[0],
        jax.random.PRNGKey(0))
    keys_shape = jax.ShapeDtypeStruct((e, s, 2), np.uint32)
    t0 = time.perf_counter()
    run: Any
    if p.mesh is None:
        run = jax.jit(evaluate).lower(pop_shape, keys_shape).compile()
    else:
        from rl_core import pad_members, padded_size, put_members, to_host
        from rl_core.parallel import member_sharding, replicated

        padded = padded_size(req.population, p.mesh)
        shape = jax.tree.map(lambda x: jax.ShapeDtypeStruct((padded, *x.shape[1:]), x.dtype),
                             pop_shape)
        rep = replicated(p.mesh)
        compiled = jax.jit(evaluate, in_shardings=(member_sharding(p.mesh), rep),
                           out_shardings=rep).lower(shape, keys_shape).compile()

        def sharded(population: Any, keys: Any) -> Any:
            pop = put_members(pad_members(to_host(population), padded), p.mesh)
            return to_host(compiled(pop, jax.device_put(keys, rep)))[:req.population]

        run = sharded

    baseline = None
    if with_baseline:
        baseline = jax.jit(evolve.make_baseline(p.envs, p.config, p.hparams, req.window)).lower(
            keys_shape).compile()
    return run, baseline, time.perf_counter() - t0


# --------------------------------------------------------------------------- the run


def evolve_request(given: dict[str, Any], generations: int | None, resume: Path | None,
                   run_name: str | None) -> EvolveRequest:
    """The request of `rl evolve`: from the options `given` (None where not given), or with
    `--resume` the one recorded in the run's evolve.json, where only `--generations` may
    change."""
    if resume is None:
        given = {**given, "generations": generations}
        return EvolveRequest(**{k: v for k, v in given.items() if v is not None})
    extra = [k for k, v in given.items() if v is not None]
    if extra:
        raise UserError(f"--resume continues a run with the settings in its evolve.json; "
                        f"only --generations may change (drop --{extra[0].replace('_', '-')})")
    if run_name is not None:
        raise UserError("--resume writes into the run's own directory; drop --run-name")
    return load_request(resume, generations)


def load_request(run_dir: Path, generations: int | None) -> EvolveRequest:
    """The request recorded in `run_dir/evolve.json`, with a new total of generations if given."""
    path = run_dir / SETTINGS
    if not path.is_file():
        raise UserError(f"--resume {run_dir}: no {SETTINGS} there; pass the directory of an "
                        f"`rl evolve` run")
    recorded = json.loads(path.read_text())["request"]
    req = EvolveRequest(**recorded)
    if generations is not None:
        req.generations = generations
    return req


