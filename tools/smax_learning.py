"""Recurrent MAPPO learning on SMAX, ours beside JaxMARL's own baseline at the same budget.

Both train `--map` (2s3z by default, as JaxMARL's yaml) against the heuristic enemy at JaxMARL's
`mappo_homogenous_rnn_smax.yaml` settings (128 envs x 128 steps, 4 epochs x 4 minibatches, lr
2e-3 annealed over the run, ReLU, a layer, a GRU and a head of 128 for the actor and for the
critic, clip 0.2, no entropy bonus; see `tools/jaxmarl_mappo_repro.py`), `--seeds` seeds each,
in this process: ours is the registry's `mappo_rnn` at its `smax` preset (`rl_core.make_train`,
keys `PRNGKey(0..n-1)`), theirs is `tools/jaxmarl_mappo_repro.py` (keys split from its SEED 0).
The measures are the same for both, over the battles that ended in the last 5% of updates, per
seed: the win rate and the team return (the sum of the allies' returns; a won battle's is about
twice the number of allies), with the mean over seeds and its 95% interval (Student t). The
figure plots each program's win rate per update (the mean over seeds of each update's finished
battles, smoothed over 20 updates) with the seeds' 95% band. The figure's JSON keeps each
program's measures and its curve, so that `--programs ours` (or `jaxmarl`) reruns one side and
takes the other from the JSON of the same map, budget and seeds.

    uv run --group bench python tools/smax_learning.py [--map 2s3z] [--seeds 4] [--timesteps T]
        [--programs ours,jaxmarl] [--figure PATH]

`--programs ours-terminating` is ours with the step limit reported as a termination (no
bootstrap from the last state), as JaxMARL's one `done` flag treats it: the difference that flag
makes. The programs not named are taken from the JSON where it holds them at the same map,
budget and seeds, and left out otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import jax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jaxmarl_mappo_repro as theirs  # noqa: E402
from ippo_learning import time_limit_as_termination  # noqa: E402
from learning_report import (  # noqa: E402
    earlier,
    plot,
    print_table,
    stored,
    summary,
    timed_compile,
    train_seeds,
)

REPO = Path(__file__).resolve().parent.parent


def measures(m: dict[str, Any], per_update: int, compile_s: float,
             run_s: float) -> dict[str, dict[str, Any]]:
    """The win rate's and the team return's summaries from per-update sums `[seeds, updates]`."""
    return {"win rate": summary(m["episode_won_sum"], m["episode_count"], per_update, compile_s,
                                run_s),
            "team return": summary(m["episode_return_sum"], m["episode_count"], per_update,
                                   compile_s, run_s)}


def run_ours(smax_map: str, timesteps: int, seeds: int,
             ablate_truncation: bool = False) -> dict[str, dict[str, Any]]:
    """The registry's `mappo_rnn` at its `smax` preset; with `ablate_truncation`, on the
    environment whose step limit terminates."""
    import rl_envs

    env = rl_envs.make(f"jaxmarl/SMAX_{smax_map}")
    if ablate_truncation:
        env = time_limit_as_termination(env)
    m, config, compile_s, run_s = train_seeds("mappo_rnn", "smax", env, timesteps, seeds)
    return measures(m, config.num_envs * config.num_steps, compile_s, run_s)


def run_theirs(smax_map: str, timesteps: int, seeds: int) -> dict[str, dict[str, Any]]:
    config = theirs.with_timesteps(dict(theirs.CONFIG, MAP_NAME=smax_map, SEQ_ORTHOGONAL=True),
                                   timesteps)
    keys = jax.random.split(jax.random.PRNGKey(config["SEED"]), seeds)
    fn, compile_s = timed_compile(jax.jit(jax.vmap(theirs.make_train(config))), keys)
    t0 = time.perf_counter()
    m = jax.block_until_ready(fn(keys))["metrics"]
    return measures(m, config["NUM_ENVS"] * config["NUM_STEPS"], compile_s,
                    time.perf_counter() - t0)


def report(results: dict[str, dict[str, Any]], smax_map: str, timesteps: int,
           seeds: int) -> None:
    for measure, digits in (("win rate", 3), ("team return", 2)):
        print(f"MAPPO-RNN, SMAX {smax_map}, {timesteps:,} environment steps x {seeds} seeds; "
              f"{measure} of the battles that ended in the last 5% of updates", flush=True)
        print_table({k: r[measure] for k, r in results.items()}, digits)


PROGRAMS = {"ours": run_ours,
            "ours-terminating": lambda *a: run_ours(*a, ablate_truncation=True),
            "jaxmarl": run_theirs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", default=theirs.CONFIG["MAP_NAME"])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--timesteps", type=int, default=None,
                    help="environment steps per seed (default: the yaml's, 1e7)")
    ap.add_argument("--programs", default="ours,jaxmarl",
                    help="the programs to train; the others come from the figure's JSON")
    ap.add_argument("--figure", default=None, help="default: docs/figures/smax-MAP-mappo.png")
    a = ap.parse_args()
    run = [p for p in a.programs.split(",") if p]
    if not run or set(run) - set(PROGRAMS):
        sys.exit(f"error: --programs {a.programs!r}: name some of {', '.join(PROGRAMS)}")
    timesteps = a.timesteps or theirs.CONFIG["TOTAL_TIMESTEPS"]
    figure = Path(a.figure or REPO / "docs" / "figures" / f"smax-{a.map}-mappo.png")
    key = {"map": a.map, "timesteps": timesteps, "seeds": a.seeds}
    kept = earlier(figure.with_suffix(".json"), key, [p for p in PROGRAMS if p not in run],
                   list(PROGRAMS))
    results: dict[str, dict[str, Any]] = {}
    for name in [p for p in PROGRAMS if p in run or p in kept]:
        # each printed as soon as it is known: one takes an hour or more
        results[name] = kept[name] if name in kept else PROGRAMS[name](a.map, timesteps, a.seeds)
        report(results, a.map, timesteps, a.seeds)
    plot({k: r["win rate"] for k, r in results.items()}, figure,
         f"MAPPO-RNN on SMAX {a.map}, {timesteps:,} steps", ylabel="win rate (training battles)")
    figure.with_suffix(".json").write_text(json.dumps(
        {**key, **{k: stored(r) for k, r in results.items()}}, indent=1) + "\n")
    print(f"figure {figure}")


if __name__ == "__main__":
    main()
