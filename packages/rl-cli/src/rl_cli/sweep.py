"""Hyperparameter sweeps as one compiled program, for the command line and for notebooks.

Every grid point (or random sample) x seed is one *member* of a single vmapped program: the traced
float hyperparameters of the algorithm (its `@hparams` class) become a `[M]` input, so the whole
sweep compiles once. Static fields shape the program and cannot differ between members; asking to
sweep one is refused with what to do instead.

Python API (no files written)::

    from rl_cli.sweep import sweep
    res = sweep("ppo", "gymnax/CartPole-v1", grid={"lr": [1e-4, 3e-4], "ent_coef": [0, 0.01]},
                num_seeds=8, total_timesteps=100_000)
    res.ranking[0]          # the best grid point: mean final return and its 95% CI
    res.final_returns       # [M] per member, members ordered point-major, seed-minor
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError
from rl_cli.stats import final_achievements, final_returns, final_win_rates
from rl_cli.sweep_points import (
    Member,
    RankRow,
    Sample,
    check_sweep_keys,
    members_of,
    rank_points,
    sweep_points,
)


class SweepResult(NamedTuple):
    points: list[dict[str, float]]  # every hyperparameter of each point
    swept: list[str]  # the names that vary
    members: list[Member]
    final_returns: np.ndarray  # [M]
    ranking: list[RankRow]
    metrics: dict[str, np.ndarray]  # [M, num_updates]
    state: Any  # final carry, leading [M]
    compile_seconds: float
    run_seconds: float
    steps_per_member: int
    # Where the environment reports them: per member the final win rate (SMAX) or score as % of
    # the maximum (Craftax), `{"final_win_rate_per_member": [M]}` or
    # `{"final_score_pct_per_member": [M]}` (`rl_cli.stats`; None where no episode ended); empty
    # for other environments. Only per member: members of different points are never pooled.
    outcomes: dict[str, Any] = {}


class Outcome(NamedTuple):
    """A per-member outcome that a sweep reports beside the return: its column in sweep.csv
    (`<column>_mean`, the mean over a point's seeds, in the summary's ranking), and its heading
    and format in the ranking table."""

    column: str
    heading: str
    fmt: str


# The outcomes a sweep reports where the environment has them, by their summary key in
# `SweepResult.outcomes`.
OUTCOMES = {"final_win_rate_per_member": Outcome("final_win_rate", "win rate", "{:.1%}"),
            "final_score_pct_per_member": Outcome("final_score_pct", "score %", "{:.2f}")}


def point_outcomes(result: SweepResult, point: int) -> dict[str, float | None]:
    """The mean over a point's seeds of each per-member outcome (win rate, score %), the
    seeds without a finished episode left out; {} for an environment without them."""
    out: dict[str, float | None] = {}
    for key, outcome in OUTCOMES.items():
        if key in result.outcomes:
            vals = np.array([nan_if_none(result.outcomes[key][m.position]) for m in result.members
                             if m.point == point], np.float64)
            vals = vals[np.isfinite(vals)]
            out[f"{outcome.column}_mean"] = float(vals.mean()) if vals.size else None
    return out


def member_outcomes(metrics: dict[str, np.ndarray], env: Any) -> dict[str, Any]:
    """The per-member entries (`OUTCOMES`) of `rl run`'s win-rate and achievement summaries;
    their pooled means and intervals, and the achievement rates averaged over every member, are
    left out: in a sweep the members train with different hyperparameters."""
    found = {**final_win_rates(metrics), **final_achievements(metrics, env)}
    return {k: found[k] for k in OUTCOMES if k in found}


def nan_if_none(x: float | None) -> float:
    """A JSON-ready outcome (None where a member finished no episode) back as a float."""
    return math.nan if x is None else float(x)


# --------------------------------------------------------------------------- planning and running


@dataclass
class SweepRequest:
    algo: str
    env: str
    grid: dict[str, list[float]] = field(default_factory=dict)
    sample: dict[str, Sample] = field(default_factory=dict)
    num_samples: int = 1
    num_seeds: int = 1
    seed: int = 0
    total_timesteps: int | None = None
    sets: dict[str, str] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    preset: str | None = None
    devices: int | None = None
    log_every: int | None = None
    track: str | None = None  # an experiment tracker beside TensorBoard (rl_cli.trackers)

    @classmethod
    def from_options(cls, o: dict[str, Any]) -> SweepRequest:
        """The request of `rl sweep`'s parsed options `o` (click's parameter names, as
        `RunRequest.from_options` reads them): `--grid`/`--sample` parsed beside `--set` and
        `--env-arg`."""
        from rl_cli.request import option_values
        from rl_cli.sweep_points import parse_grid, parse_sample

        values = option_values(cls, o)
        values["grid"] = parse_grid(values["grid"])
        values["sample"] = parse_sample(values["sample"])
        return cls(**values)


@dataclass
class SweepPlan:
    """Everything validated and built: nothing compiled, nothing written."""

    req: SweepRequest
    prepared: Any  # request.Prepared
    points: list[Any]  # hparams instances
    swept: list[str]
    members: list[Member]
    mesh: Any


def plan_sweep(req: SweepRequest) -> SweepPlan:
    from rl_cli.request import RunRequest, member_mesh_for, prepare

    if req.num_seeds < 1:
        raise UserError(f"--num-seeds must be >= 1, got {req.num_seeds}")
    if req.num_samples < 1:
        raise UserError(f"--num-samples must be >= 1, got {req.num_samples}")
    if req.num_samples > 1 and not req.sample:
        raise UserError("--num-samples needs at least one --sample key=DIST:LOW:HIGH to draw")
    if not req.grid and not req.sample:
        raise UserError("nothing to sweep: give --grid key=v1,v2,... and/or "
                        "--sample key=DIST:LOW:HIGH (or use `rl run --num-seeds` for seeds only)")
    prepared = prepare(RunRequest(
        algo=req.algo, env=req.env, num_seeds=req.num_seeds, seed=req.seed,
        total_timesteps=req.total_timesteps, sets=req.sets, env_kwargs=req.env_kwargs,
        preset=req.preset, log_every=req.log_every, devices=req.devices, track=req.track))
    swept = [*req.grid, *req.sample]
    check_sweep_keys(prepared.spec, swept)
    overlap = [k for k in swept if k in req.sets]
    if overlap:
        raise UserError(f"'{overlap[0]}' is both swept and fixed with --set; drop one of them")
    for key, values in req.grid.items():
        if not values:
            raise UserError(f"--grid {key} has no values")
    from rl_cli.capacity import check_capacity, check_member_count

    num_points = math.prod(len(v) for v in req.grid.values()) * (
        req.num_samples if req.sample else 1)
    check_member_count(num_points * req.num_seeds, "the sweep's points x seeds")
    points = sweep_points(prepared.hparams, req.grid, req.sample, req.num_samples, req.seed)
    seeds = [req.seed + i for i in range(req.num_seeds)]
    mesh = member_mesh_for(req.devices)
    algo = prepared.algorithm
    from rl_algos.common import hparams_as_arrays
    from rl_core import chunk_length

    check_capacity(algo, hparams_as_arrays(points[0]),
                   req.log_every or chunk_length(algo.num_updates),
                   per_device(len(points) * len(seeds), mesh), "the sweep's points x seeds")
    members = members_of(len(points), seeds)
    return SweepPlan(req, prepared, points, swept, members, mesh)


def per_device(members: int, mesh: Any) -> int:
    """Members each device holds (the member axis is padded to a multiple of the devices)."""
    return members if mesh is None else -(-members // int(mesh.devices.size))


def member_inputs(plan: SweepPlan) -> tuple[Any, Any]:
    """`keys[M, 2]` (member seed) and hparams of `[M]` float32 arrays."""
    import jax.numpy as jnp

    from rl_cli.request import member_keys

    keys = member_keys([m.seed for m in plan.members])
    cls = type(plan.points[0])
    columns = {f: np.array([getattr(plan.points[m.point], f) for m in plan.members], np.float32)
               for f in cls._fields}
    return keys, cls(**{f: jnp.asarray(v) for f, v in columns.items()})


def run_sweep(plan: SweepPlan, on_compiled: Callable[[Any], None] | None = None,
              on_chunk: Callable[[Any], None] | None = None) -> SweepResult:
    """Compiles the sweep once and runs it; `on_chunk` sees each chunk's `[M, L]` metrics."""
    import jax

    from rl_core import chunk_length, compile_members, run_members

    algo = plan.prepared.algorithm
    keys, hp = member_inputs(plan)
    chunk_len = plan.req.log_every or chunk_length(algo.num_updates)
    compiled = compile_members(algo, keys, hp, chunk_len, mesh=plan.mesh)
    if on_compiled is not None:
        on_compiled(compiled)
    t0 = time.perf_counter()
    result = run_members(compiled, keys, hp, on_chunk)
    jax.block_until_ready(result.state)
    return sweep_result(plan, result, compiled.compile_seconds, time.perf_counter() - t0)


def sweep_result(plan: SweepPlan, result: Any, compile_seconds: float,
                 run_seconds: float) -> SweepResult:
    """The ranked `SweepResult` of a finished run of the sweep's members (`TrainResult`)."""
    algo = plan.prepared.algorithm
    finals = final_returns(np.asarray(result.metrics["episode_return_sum"]),
                           np.asarray(result.metrics["episode_count"]))
    points = [{k: float(v) for k, v in p._asdict().items()} for p in plan.points]
    return SweepResult(
        points, plan.swept, plan.members, finals,
        rank_points(points, plan.swept, plan.members, finals),
        result.metrics, result.state, compile_seconds, run_seconds,
        algo.num_updates * algo.steps_per_update,
        member_outcomes(result.metrics, plan.prepared.env),
    )


def sweep(
    algo: str = "ppo",
    env: str = "gymnax/CartPole-v1",
    *,
    grid: dict[str, Sequence[float]] | None = None,
    sample: dict[str, tuple[str, float, float]] | None = None,
    num_samples: int = 1,
    num_seeds: int = 1,
    seed: int = 0,
    total_timesteps: int | None = None,
    sets: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    preset: str | None = None,
    devices: int | None = None,
    log_every: int | None = None,
) -> SweepResult:
    """The notebook API of `rl sweep`: the same members, one compiled program, no files.
    `grid={"lr": [1e-4, 3e-4]}`, `sample={"lr": ("loguniform", 1e-5, 1e-2)}`, `sets` fixes
    other fields (`{"num_envs": 8}`). Bad input raises `UserError` / `ConfigError`."""
    req = SweepRequest(
        algo=algo, env=env,
        grid={k: [float(v) for v in vs] for k, vs in (grid or {}).items()},
        sample={k: Sample(*v) for k, v in (sample or {}).items()},
        num_samples=num_samples, num_seeds=num_seeds, seed=seed,
        total_timesteps=total_timesteps, sets={k: str(v) for k, v in (sets or {}).items()},
        env_kwargs=dict(env_kwargs or {}), preset=preset, devices=devices, log_every=log_every)
    return run_sweep(plan_sweep(req))
