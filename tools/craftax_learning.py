"""Craftax learning: recurrent PPO and recurrent PQN at their `craftax` presets, scored the way
the Craftax paper reports it.

Each algorithm trains `--seeds` seeds in one program (`rl_core.make_train` under `vmap`, keys
`PRNGKey(0..n-1)`) on `craftax/<--env>` (Craftax-Symbolic-v1 by default) for `--timesteps`
environment steps (1e6: the paper's Craftax-1M). The score of a seed is the mean return of the
training episodes that ended in the last 5% of updates as a percentage of the maximum return
(`max_achievement_return`: 226 in Craftax, 22 in Classic), the Craftax paper's measure; the
table gives the mean over seeds with its 95% interval (Student t) next to the paper's figure at
that budget, and each achievement's success rate over the same episodes. The figure plots the
score per update (the seeds' mean, smoothed over 20 updates) with the seeds' 95% band.

    uv run --group bench python tools/craftax_learning.py [--seeds 4] [--timesteps 1e6]
        [--env Craftax-Symbolic-v1] [--algos ppo_rnn,pqn_rnn]

The presets are the papers' settings scaled to a CPU (`rl_algos/ppo_rnn/config.py` and
`rl_algos/pqn_rnn/config.py` state both); the rollout is the one `rl run` trains with (optimistic
resets, one fresh world per 16 environments per step).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_report import (  # noqa: E402
    plot,
    print_table,
    summary,
    timed_compile,
    train_seeds,
)

REPO = Path(__file__).resolve().parent.parent
# The Craftax paper's scores (% of the maximum return), Craftax-Symbolic, by budget
# (Matthews et al., 2024): PPO-RNN at 1e6 steps (Craftax-1M) and 1e9 (Craftax-1B);
# PQN-RNN at 1e9 from the PQN paper (Gallici et al., 2024). No published PQN-RNN 1M figure.
PUBLISHED = {("ppo_rnn", 1_000_000): 2.3, ("ppo_rnn", 1_000_000_000): 15.3,
             ("pqn_rnn", 1_000_000_000): 16.0}


def run(algo: str, env_name: str, timesteps: int, seeds: int) -> dict[str, Any]:
    """One algorithm's seeds at its preset, `scored`."""
    import rl_envs

    env = rl_envs.make(f"craftax/{env_name}")
    metrics, config, compile_s, run_s = train_seeds(algo, env.family, env, timesteps, seeds)
    published = PUBLISHED.get((algo, timesteps)) if env.family == "craftax" else None
    return scored(metrics, env, config.batch_size, compile_s, run_s, seeds, published)


def scored(metrics: dict[str, Any], env: Any, per_update: int, compile_s: float, run_s: float,
           seeds: int, published: float | None) -> dict[str, Any]:
    """One program's result from its metrics `[seeds, updates, ...]`: the summary of its
    returns as % of `env`'s maximum (`learning_report.summary`), each achievement's success rate
    (`rl_cli.stats.final_achievements`), the paper's figure, the seeds and the device."""
    from rl_cli.stats import final_achievements

    out = summary(metrics["episode_return_sum"] * 100.0 / env.max_achievement_return,
                  metrics["episode_count"], per_update, compile_s, run_s)
    out["achievements"] = final_achievements(metrics, env)["final_achievement_rates"]
    return {**out, "published": published, "seeds": seeds,
            "device": jax.devices()[0].device_kind}


def their_config(env_name: str, timesteps: int, seeds: int) -> dict[str, Any]:
    """Craftax_Baselines' `ppo_rnn.py` defaults at the sizes ppo_rnn's preset scales them to
    (its envs and layer width); everything else is already the preset's."""
    import craftax_ppo_rnn_repro as theirs

    import rl_algos

    ours = rl_algos.get("ppo_rnn").presets["craftax"].config
    return {**theirs.CONFIG, "ENV_NAME": env_name, "TOTAL_TIMESTEPS": timesteps,
            "NUM_ENVS": ours["num_envs"], "LAYER_SIZE": ours["rnn_hidden"],
            "NUM_REPEATS": seeds}


def run_theirs(env_name: str, timesteps: int, seeds: int) -> dict[str, Any]:
    """Craftax_Baselines' recurrent PPO (`tools/craftax_ppo_rnn_repro.py`), scored as ours."""
    import craftax_ppo_rnn_repro as theirs

    import rl_envs

    env = rl_envs.make(f"craftax/{env_name}")  # its achievement names and maximum return
    config = their_config(env_name, timesteps, seeds)
    keys = theirs.make_keys(config)
    fn, compile_s = timed_compile(jax.jit(partial(jax.lax.map, theirs.make_train(config))), keys)
    t0 = time.perf_counter()
    m = jax.block_until_ready(fn(keys))["metric"]
    run_s = time.perf_counter() - t0
    metrics = {k: np.asarray(v) for k, v in m.items()}
    return scored(metrics, env, config["NUM_ENVS"] * config["NUM_STEPS"], compile_s, run_s,
                  seeds, None)


def _mean(rate: Any) -> float:
    """A saved rate (a number, per-seed numbers, None for no episode) as one number."""
    v = np.asarray(rate, np.float64).ravel()
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else 0.0


def print_achievements(results: dict[str, dict[str, Any]]) -> None:
    """Each achievement's success rate (the seeds' mean, %) per program, the rows some program
    reached."""
    names = list(next(iter(results.values()))["achievements"])
    w = max(len(n) for n in names)
    cols = [max(8, len(a)) for a in results]
    head = " ".join(f"{a:>{c}s}" for a, c in zip(results, cols, strict=True))
    print(f"{'achievement':{w}s} {head}")
    for n in names:
        rates = [100 * _mean(r["achievements"][n]) for r in results.values()]
        if any(x > 0 for x in rates):
            print(f"{n:{w}s} " + " ".join(f"{x:{c}.1f}" for x, c in zip(rates, cols, strict=True)))


def report(results: dict[str, dict[str, Any]], record: dict[str, Any], figure: Path) -> None:
    """The score table, the achievement table, the figure and its JSON (curves included, so that
    `--merge` can draw runs made apart together)."""
    print(f"{record['task']}, {record['timesteps']:,} environment steps; score: return of the "
          "training episodes that ended in the last 5% of updates, % of the maximum")
    print_table(results, 2)
    for algo, r in results.items():
        published = "" if r["published"] is None else f"; published {r['published']}%"
        print(f"{algo}: {r['seeds']} seeds on {r['device']}{published}")
    print_achievements(results)
    plot(results, figure, f"{record['task']}, {record['timesteps']:,} steps",
         "score (% of max return)")
    saved = {k: {**r, "curve": np.asarray(r["curve"]).tolist()} for k, r in results.items()}
    figure.with_suffix(".json").write_text(json.dumps({**record, **saved}, indent=1) + "\n")
    print(f"figure {figure}")


def default_figure(record: dict[str, Any]) -> Path:
    """docs/figures/craftax-<env>-<budget>.png, e.g. craftax-craftax-symbolic-v1-1e6.png."""
    env = record["task"].split("/", 1)[1].lower()
    budget = f"{record['timesteps']:.0e}".replace("+0", "").replace("+", "")
    return REPO / "docs" / "figures" / f"craftax-{env}-{budget}.png"


def merge(paths: list[str], figure: Path | None) -> None:
    """`--merge`: the runs saved in `paths` (one algorithm each, or several; of one task and
    budget, on any device) as one report."""
    results: dict[str, dict[str, Any]] = {}
    record: dict[str, Any] = {}
    for p in paths:
        data = json.loads(Path(p).read_text())
        head = {k: data.pop(k) for k in ("task", "timesteps")}
        if record and head != record:
            raise SystemExit(f"{p} is a run of {head}, the first of {record}: merge runs of one "
                             "task and budget")
        record = head
        shared = {k: data.pop(k) for k in ("seeds", "device") if k in data}  # one run's own
        results.update({k: {**shared, **r, "curve": np.asarray(r["curve"], np.float64)}
                        for k, r in data.items()})
    report(results, record, figure or default_figure(record))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="Craftax-Symbolic-v1")
    ap.add_argument("--algos", default="ppo_rnn,pqn_rnn")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--timesteps", type=float, default=1e6, help="environment steps per seed")
    ap.add_argument("--figure", default=None,
                    help="default: docs/figures/craftax-<env>-<budget>.png (and .json)")
    ap.add_argument("--theirs", action="store_true",
                    help="also Craftax_Baselines' ppo_rnn.py (tools/craftax_ppo_rnn_repro.py) at "
                         "the ppo_rnn preset's sizes")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="report runs saved apart (this tool's JSONs) together; trains nothing")
    a = ap.parse_args()
    figure = Path(a.figure) if a.figure else None
    if a.merge:
        merge(a.merge, figure)
        return
    timesteps = int(a.timesteps)
    results = {algo: run(algo, a.env, timesteps, a.seeds) for algo in a.algos.split(",") if algo}
    if a.theirs:
        results["craftax_baselines"] = run_theirs(a.env, timesteps, a.seeds)
    record = {"task": f"craftax/{a.env}", "timesteps": timesteps}
    report(results, record, figure or default_figure(record))


if __name__ == "__main__":
    main()
