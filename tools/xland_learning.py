"""XLand-MiniGrid single-task recurrent PPO, ours beside XLand-MiniGrid's own script at the same
budget and sizes.

Both train `XLand-MiniGrid-R1-9x9` (one 9x9 room, a 5x5 egocentric view, 243 steps) on one
ruleset, written by this script to `--benchmark` as a one-ruleset benchmark file (the
`trivial-21k` benchmark downloads from the internet; this task has its shape: a goal and no
rules): pick up the yellow ball, with a purple square and a green pyramid placed as distractors.
The reward on success is `1 - 0.9 * steps / 243`. Ours is the registry's `ppo_rnn` at its `xland`
preset (`rl_core.make_train`, keys `PRNGKey(0..n-1)`); theirs is `tools/xminigrid_ppo_repro.py`
(`jax.random.key(seed)` for seeds 0..n-1, as its `TrainConfig.seed`), with the preset's scaled
sizes: 1024 envs x 16 steps, a GRU of 256, heads of 256, one epoch of 16 minibatches, lr 1e-3
annealed. The measure is the same for both: the mean return of the training episodes that ended
in the last 5% of updates, per seed, with the mean over seeds and its 95% interval (Student t).
The figure plots each program's return per update with the seeds' 95% band.

    uv run --group bench python tools/xland_learning.py [--seeds 3] [--timesteps 1e7]
        [--algos ppo_rnn,pqn_rnn] [--only ours|theirs]

`--algos pqn_rnn` trains recurrent PQN at its `xland` preset (ppo_rnn's rollout and sizes with
PQN's update; there is no published recurrent PQN for XLand-MiniGrid to set beside it).

What differs between the two programs, by design: ours resets the GRU at every episode start,
bootstraps from the last state when the time limit ends an episode, reads the flat one-hot view
(5x5 cells of 13 + 12) through one ReLU layer, uses ReLU in its heads, equinox's GRU cell with
its initialisers, and Adam's eps 1e-5; theirs carries the GRU across episodes, stops every
return at an episode's end, reads embedded ids through three convolutions, the agent's
direction, the previous action and the previous reward, uses tanh heads, its own GRU, and eps
1e-8. The figure smooths each curve over 20 updates.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import xminigrid_ppo_repro as theirs  # noqa: E402
from learning_report import (  # noqa: E402
    plot,
    print_table,
    summary,
    timed_compile,
    train_seeds,
)

REPO = Path(__file__).resolve().parent.parent
ENV = "XLand-MiniGrid-R1-9x9"


def write_benchmark(path: Path) -> None:
    """The one-ruleset benchmark: pick up the yellow ball; a purple square and a green pyramid
    are placed too."""
    from xminigrid.benchmarks import save_bz2_pickle
    from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles
    from xminigrid.core.goals import AgentHoldGoal
    from xminigrid.core.rules import EmptyRule

    ball = TILES_REGISTRY[Tiles.BALL, Colors.YELLOW]
    tiles = jnp.stack([ball, TILES_REGISTRY[Tiles.SQUARE, Colors.PURPLE],
                       TILES_REGISTRY[Tiles.PYRAMID, Colors.GREEN]])
    save_bz2_pickle({"goals": AgentHoldGoal(tile=ball).encode()[None],
                     "rules": EmptyRule().encode()[None, None],
                     "init_tiles": tiles[None], "num_rules": jnp.array([1])}, str(path))


def run_ours(algo: str, benchmark: Path, timesteps: int, seeds: int) -> dict[str, Any]:
    """The registry's `algo` (`ppo_rnn` or `pqn_rnn`) at its `xland` preset."""
    import rl_envs

    env = rl_envs.make(f"xminigrid/{ENV}", benchmark=str(benchmark), ruleset=0)
    m, config, compile_s, run_s = train_seeds(algo, "xland", env, timesteps, seeds)
    return summary(m["episode_return_sum"], m["episode_count"], config.batch_size, compile_s,
                   run_s)


def their_config(timesteps: int) -> dict[str, Any]:
    """Their defaults with our preset's scaled sizes."""
    import rl_algos

    ours = rl_algos.get("ppo_rnn").presets["xland"].config
    return {**theirs.CONFIG, "ENV_ID": ENV, "TOTAL_TIMESTEPS": timesteps,
            "NUM_ENVS": ours["num_envs"], "RNN_HIDDEN_DIM": ours["rnn_hidden"]}


def run_theirs(benchmark: Path, timesteps: int, seeds: int) -> dict[str, Any]:
    from xminigrid.benchmarks import load_benchmark_from_path

    config = their_config(timesteps)
    env, env_params = theirs.make_env(config, load_benchmark_from_path(str(benchmark))
                                      .get_ruleset(0))
    rng, hstate, ts = theirs.make_states(config, env, env_params, list(range(seeds)))
    fn, compile_s = timed_compile(jax.jit(jax.vmap(theirs.make_train(config, env, env_params))),
                                  rng, ts, hstate)
    t0 = time.perf_counter()
    m = jax.block_until_ready(fn(rng, ts, hstate))["loss_info"]
    return summary(m["episode_return_sum"], m["episode_count"],
                   config["NUM_ENVS"] * config["NUM_STEPS"], compile_s, time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--timesteps", type=float, default=1e7, help="environment steps per seed")
    ap.add_argument("--benchmark", default="/tmp/xland-yellow-ball.bench",
                    help="where to write the one-ruleset benchmark file")
    ap.add_argument("--algos", default="ppo_rnn",
                    help="ours to train, comma-separated: ppo_rnn, pqn_rnn (both `xland` presets)")
    ap.add_argument("--only", choices=["ours", "theirs"], default=None)
    ap.add_argument("--figure", default=None,
                    help="default: docs/figures/xland-ppo-rnn.png (and .json) when both ours and "
                         "theirs ran; with --only, none unless given")
    a = ap.parse_args()
    timesteps, benchmark = int(a.timesteps), Path(a.benchmark)
    default = REPO / "docs" / "figures" / "xland-ppo-rnn.png" if a.only is None else None
    figure = Path(a.figure) if a.figure else default
    write_benchmark(benchmark)
    results = {}
    if a.only != "theirs":
        for algo in filter(None, a.algos.split(",")):
            results[algo] = run_ours(algo, benchmark, timesteps, a.seeds)
    if a.only != "ours":
        results["xland-minigrid"] = run_theirs(benchmark, timesteps, a.seeds)
    print(f"{ENV} (pick up the yellow ball), {timesteps:,} environment steps x {a.seeds} seeds; "
          "return of the training episodes that ended in the last 5% of updates")
    print_table(results, 3)
    if figure is not None:
        plot(results, figure, f"{ENV}, {timesteps:,} steps", "return (training episodes)")
        record = {k: {f: v for f, v in r.items() if f != "curve"} for k, r in results.items()}
        figure.with_suffix(".json").write_text(json.dumps(
            {"task": f"xminigrid/{ENV}", "timesteps": timesteps, "seeds": a.seeds, **record},
            indent=1) + "\n")
        print(f"figure {figure}")


if __name__ == "__main__":
    main()
