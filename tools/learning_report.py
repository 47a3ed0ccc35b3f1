"""What the learning tools (`ippo_learning.py`, `smax_learning.py`, `xland_learning.py`,
`craftax_learning.py`) share: a program compiled apart from its run, the per-seed summary of
final returns with its 95% interval, the table they print and the curve figure they draw."""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

SMOOTH = 20  # updates per point of the plotted curve


def window(updates: int) -> int:
    """Updates averaged per plotted point: `SMOOTH`, or a quarter of the run where `SMOOTH`
    would leave under 4 points, so that a short run still draws a line."""
    return SMOOTH if updates >= 4 * SMOOTH else max(1, updates // 4)


def timed_compile(fn: Any, *args: Any) -> tuple[Any, float]:
    """`fn` (jitted) lowered and compiled for `args`, and the seconds that took."""
    t0 = time.perf_counter()
    return fn.lower(*args).compile(), time.perf_counter() - t0


def train_seeds(algo: str, preset: str, env: Any, timesteps: int, seeds: int,
                hparams: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any, float, float]:
    """The registry's `algo` at its `preset` (the preset's traced settings updated by
    `hparams`) trained on `env` for `timesteps` steps, `seeds` seeds in one program
    (`rl_core.make_train` under `vmap`, keys `PRNGKey(0..seeds-1)`): its metrics as NumPy
    arrays `[seeds, updates, ...]`, the config, and the compile and run seconds."""
    import jax

    import rl_algos
    import rl_core
    from rl_algos.common import hparams_as_arrays

    spec = rl_algos.get(algo)
    p = spec.presets[preset]
    config = spec.config_cls(**{**p.config, "total_timesteps": timesteps})
    hp = hparams_as_arrays(spec.hparams_cls(**{**p.hparams, **(hparams or {})}))
    train = rl_core.make_train(spec.make_algorithm(env, config))
    keys = jax.vmap(jax.random.PRNGKey)(np.arange(seeds))
    hps = jax.tree.map(lambda x: np.broadcast_to(x, (seeds,)), hp)
    fn, compile_s = timed_compile(jax.jit(jax.vmap(train)), keys, hps)
    t0 = time.perf_counter()
    m = jax.block_until_ready(fn(keys, hps)).metrics
    run_s = time.perf_counter() - t0
    return {k: np.asarray(v) for k, v in m.items()}, config, compile_s, run_s


def summary(return_sum: Any, count: Any, per_update: int, compile_s: float,
            run_s: float) -> dict[str, Any]:
    """From per-update sums of finished episodes' returns and their counts `[seeds, updates]`:
    the final return per seed (`rl_core.final_return`), their mean and 95% interval, the
    per-update curve, and the timings."""
    from rl_cli.stats import mean_ci95
    from rl_core import final_return

    s, c = np.asarray(return_sum, np.float64), np.asarray(count, np.float64)
    finals = final_return(s, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.where(c > 0, s / np.maximum(c, 1), np.nan)
    mean, ci = mean_ci95(finals)
    seeds, updates = c.shape
    return {"final_per_seed": finals.tolist(), "final_mean": mean, "final_ci95": ci,
            "curve": curve, "steps_per_update": per_update, "compile_s": compile_s,
            "run_s": run_s, "steps_per_s": seeds * updates * per_update / run_s}


def print_table(results: dict[str, dict[str, Any]], digits: int) -> None:
    """One row per program: the final return's mean and 95% interval, the timings, per seed."""
    w = max(len(k) for k in results)
    print(f"{'program':{w}s} {'mean':>8s} {'95% CI':>7s}  {'compile s':>9s} {'run s':>7s} "
          f"{'steps/s':>8s}  per seed")
    for name, r in results.items():
        seeds = ", ".join(f"{x:.{digits}f}" for x in r["final_per_seed"])
        print(f"{name:{w}s} {r['final_mean']:8.{digits}f} {r['final_ci95']:7.{digits}f}  "
              f"{r['compile_s']:9.1f} {r['run_s']:7.1f} {r['steps_per_s']:8,.0f}  {seeds}")


def plot(results: dict[str, dict[str, Any]], path: Path, title: str,
         ylabel: str = "team return (training episodes)") -> None:
    """Each program's curve `[seeds, updates]`, averaged over `window(updates)` updates per
    point, its mean over seeds with the seeds' 95% band (Student t), written to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import special

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, r in results.items():
        curve = r["curve"]
        n, u = curve.shape
        w = window(u)
        k = u // w
        with warnings.catch_warnings():  # a window without a finished episode is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            pts = np.nanmean(curve[:, : k * w].reshape(n, k, w), axis=2)
        x = (np.arange(k) + 1) * w * r["steps_per_update"]
        mean = pts.mean(0)
        half = (special.stdtrit(n - 1, 0.975) * pts.std(0, ddof=1) / np.sqrt(n) if n > 1
                else np.zeros_like(mean))
        ax.plot(x, mean, label=f"{name} ({n} seeds)")
        ax.fill_between(x, mean - half, mean + half, alpha=0.25)
    ax.set_xlabel("environment steps")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def stored(record: dict[str, Any]) -> dict[str, Any]:
    """A program's measures as the JSON keeps them (as `craftax_learning.py` keeps its curves):
    the curve `[seeds, updates]` as lists, an update without a finished battle as NaN."""
    return {measure: {**s, "curve": np.asarray(s["curve"]).tolist()}
            for measure, s in record.items()}


def loaded(record: dict[str, Any]) -> dict[str, Any]:
    """`stored`'s inverse."""
    return {measure: {**s, "curve": np.asarray(s["curve"], np.float64)}
            for measure, s in record.items()}


def earlier(path: Path, key: dict[str, Any], names: list[str],
            programs: list[str]) -> dict[str, dict[str, Any]]:
    """Those of the programs `names` (of the tool's `programs`) that the JSON at `path` holds at
    the same settings (`key`: e.g. map, budget and seeds), each measure with its curve; one line
    for a JSON that cannot be read and for each program left out."""
    if not names:
        return {}
    try:
        old = json.loads(path.read_text()) if path.exists() else {}
        same = {k: old.get(k) for k in key} == key
        kept = {n: loaded(old[n]) for n in names
                if same and "curve" in old.get(n, {}).get("win rate", {})}
    except (ValueError, TypeError, AttributeError, KeyError) as e:
        sys.exit(f"error: {path} is not a JSON this tool wrote ({e}); move it away or train "
                 f"every program: --programs {','.join(programs)}")
    for n in sorted(set(names) - set(kept)):
        print(f"{n}: not in {path} at {key}; left out (train it: --programs {n})", flush=True)
    for n in kept:
        print(f"{n}: taken from {path} (its run's compile and run times)", flush=True)
    return kept
