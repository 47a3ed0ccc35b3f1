"""The points of a sweep, pure functions of the request: `--grid` and `--sample` parsed, the
swept keys checked against the algorithm's traced hyperparameters, the points (a grid's product
or random draws), the members (point x seed) and the ranking of the points by mean final
return."""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from rl_algos.common.config import field_types
from rl_cli.errors import UserError
from rl_cli.stats import mean_ci95

DISTRIBUTIONS = ("uniform", "loguniform")


class Sample(NamedTuple):
    """A random-search range: `uniform` or `loguniform` over [low, high]."""

    dist: str
    low: float
    high: float


class Member(NamedTuple):
    position: int  # on the member axis
    point: int  # index of its hyperparameter point
    seed: int
    name: str  # also its TensorBoard run directory


class RankRow(NamedTuple):
    rank: int  # 1 = best mean final return
    point: int
    hparams: dict[str, float]  # the swept values of this point
    mean: float  # mean final return over the point's seeds (NaN if none finished an episode)
    ci95: float  # half-width of the 95% confidence interval of that mean
    num_seeds: int


def _float(key: str, raw: str, what: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise UserError(f"{what} {key}: '{raw}' is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"{what} {key}: '{raw}' is not a finite number")
    return value


def parse_grid(items: Sequence[str]) -> dict[str, list[float]]:
    """`("lr=1e-4,3e-4", "ent_coef=0,0.01")` -> `{"lr": [1e-4, 3e-4], "ent_coef": [0.0, 0.01]}`."""
    out: dict[str, list[float]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or not raw.strip():
            raise UserError(f"--grid expects key=v1,v2,..., got '{item}'")
        if key in out:
            raise UserError(f"--grid {key} is given twice; list all its values in one --grid")
        values = [v.strip() for v in raw.split(",")]
        if "" in values:
            raise UserError(f"--grid {key}={raw} has an empty value; list values separated by "
                            "single commas, e.g. --grid lr=1e-4,3e-4")
        out[key] = [_float(key, v, "--grid") for v in values]
        if len(set(out[key])) != len(out[key]):
            raise UserError(f"--grid {key} lists a value twice: {raw}")
    return out


def parse_sample(items: Sequence[str]) -> dict[str, Sample]:
    """`("lr=loguniform:1e-5:1e-2",)` -> `{"lr": Sample("loguniform", 1e-5, 1e-2)}`."""
    out: dict[str, Sample] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        parts = raw.split(":")
        if not sep or not key or len(parts) != 3:
            raise UserError(f"--sample expects key=DIST:LOW:HIGH with DIST one of "
                            f"{'/'.join(DISTRIBUTIONS)}, got '{item}'")
        if key in out:
            raise UserError(f"--sample {key} is given twice")
        out[key] = Sample(parts[0].strip(), _float(key, parts[1], "--sample"),
                          _float(key, parts[2], "--sample"))
    return out


def check_sweep_keys(spec: Any, keys: Sequence[str]) -> None:
    """Only traced hyperparameters can vary inside one program; a static field is refused with
    the reason and the alternative."""
    static, traced = field_types(spec.config_cls), field_types(spec.hparams_cls)
    for key in keys:
        if key in traced:
            continue
        if key in static:
            raise UserError(
                f"cannot sweep '{key}': it is a static field of {spec.name} that shapes the "
                f"compiled program, so members of one program cannot differ in it; sweep only "
                f"traced hyperparameters ({', '.join(traced)}) and run a separate "
                f"`rl run --set {key}=...` for each value of {key}")
        close = difflib.get_close_matches(key, [*traced, *static], n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UserError(f"cannot sweep '{key}': {spec.name} has no such hyperparameter.{hint} "
                        f"Sweepable: {', '.join(traced)}.")


def sweep_points(base: Any, grid: dict[str, list[float]], sample: dict[str, Sample],
                 num_samples: int, seed: int) -> list[Any]:
    """Hyperparameter points: the grid's cartesian product (keys in the given order, the last
    varying fastest) for each of `num_samples` random draws of the sampled keys (drawn once, from
    `seed`, so the same command gives the same points). Each point is `base` with those fields
    replaced and is validated."""
    for key, s in sample.items():
        if s.dist not in DISTRIBUTIONS:
            raise UserError(f"--sample {key}: unknown distribution '{s.dist}'; "
                            f"use one of {', '.join(DISTRIBUTIONS)}")
        if not s.low < s.high:
            raise UserError(f"--sample {key}: LOW must be below HIGH, got {s.low}:{s.high}")
        if s.dist == "loguniform" and s.low <= 0:
            raise UserError(f"--sample {key}: loguniform needs LOW > 0, got {s.low}")
    both = set(grid) & set(sample)
    if both:
        raise UserError(f"'{sorted(both)[0]}' is both in --grid and --sample; pick one")
    rng = np.random.default_rng(seed)
    draws: list[dict[str, float]] = []
    for _ in range(num_samples if sample else 1):
        d = {}
        for key, s in sample.items():
            if s.dist == "uniform":
                d[key] = float(rng.uniform(s.low, s.high))
            else:
                d[key] = float(np.exp(rng.uniform(np.log(s.low), np.log(s.high))))
        draws.append(d)
    points = []
    for combo in itertools.product(*grid.values()):
        for d in draws:
            hp = base._replace(**dict(zip(grid, combo, strict=True)), **d)
            try:
                hp.validate()
            except ValueError as e:
                raise UserError(f"sweep point {dict(zip(grid, combo, strict=True)) | d}: {e}") \
                    from None
            points.append(hp)
    return points


def members_of(num_points: int, seeds: Sequence[int]) -> list[Member]:
    """Point-major, seed-minor: member `p * S + s` is point p with seed `seeds[s]`."""
    return [Member(p * len(seeds) + i, p, s, f"p{p:03d}-seed{s}")
            for p in range(num_points) for i, s in enumerate(seeds)]


def rank_points(points: list[dict[str, float]], swept: list[str], members: list[Member],
                finals: np.ndarray) -> list[RankRow]:
    """Mean final return with its 95% CI per point, best first (points with no finished episode
    last)."""
    rows = []
    for p, hp in enumerate(points):
        values = np.array([finals[m.position] for m in members if m.point == p])
        mean, ci = mean_ci95(values)
        rows.append((p, {k: hp[k] for k in swept}, mean, ci, len(values)))
    rows.sort(key=lambda r: (not math.isfinite(r[2]), -r[2] if math.isfinite(r[2]) else 0.0))
    return [RankRow(i + 1, *r) for i, r in enumerate(rows)]
