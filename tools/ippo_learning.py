"""IPPO learning, ours beside JaxMARL's own baseline at the same budget, on MPE or Overcooked.

`--task mpe`: both train `MPE_simple_spread_v3` (3 agents) at JaxMARL's `ippo_ff_mpe.yaml`
settings (16 envs x 128 steps, 4 epochs x 4 minibatches, tanh MLPs of 64-64, lr 2.5e-4 annealed;
see `tools/bench_ippo.py`), the yaml's 1e7 environment steps by default. `--task overcooked`:
both train Overcooked on `--layout` (cramped_room by default; the yaml names coord_ring) at
`ippo_ff_overcooked.yaml` (the same sizes, 5e6 steps, the shaping reward annealed from 1 to 0
over the first 2.5e6 steps). `--seeds` seeds each, in this process: ours is the registry's
`ippo` at its `mpe` or `overcooked` preset (`rl_core.make_train`, keys `PRNGKey(0..n-1)`),
theirs is `tools/jaxmarl_ippo_repro.py` (keys split from its SEED 30, as its `main` does). The
measure is the same for both: the mean team return (the sum of the agents' returns; on Overcooked
the deliveries alone, never the shaping) of the training episodes that ended in the last 5% of
updates, per seed, with the mean over seeds and its 95% interval (Student t). The figure plots
each program's team return per update (the mean over seeds of each update's finished episodes,
smoothed over 20 updates) with the seeds' 95% band.

    uv run --group bench python tools/ippo_learning.py [--task mpe|overcooked]
        [--layout cramped_room] [--seeds 4] [--timesteps T] [--ablate-truncation]

`--ablate-truncation` adds ours with the time limit (the only end of an MPE or Overcooked
episode) reported as a termination, as JaxMARL's one `done` flag treats it (no bootstrap from the
last state): the difference that flag makes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jaxmarl_ippo_repro as theirs  # noqa: E402
from learning_report import (  # noqa: E402
    plot,
    print_table,
    summary,
    timed_compile,
    train_seeds,
)

REPO = Path(__file__).resolve().parent.parent


def time_limit_as_termination(env: Any) -> Any:
    """`env` with every time-limit end reported as a termination (no bootstrap from it), the way
    JaxMARL's single `done` flag treats it: the ablation of `--ablate-truncation`."""
    import jax.numpy as jnp

    from rl_core import Wrapper

    class TimeLimitAsTermination(Wrapper):
        def step(self, state: Any, action: Any, key: Any) -> Any:
            state, ts = self.env.step(state, action, key)
            return state, ts._replace(terminated=ts.terminated | ts.truncated,
                                      truncated=jnp.zeros_like(ts.truncated))

    return TimeLimitAsTermination(env)


class Task(NamedTuple):
    """What one `--task` trains: our environment id and preset, their config, the title."""

    env_id: str
    preset: str
    config: dict[str, Any]
    title: str


def task(name: str, layout: str) -> Task:
    if name == "mpe":
        return Task("jaxmarl/MPE_simple_spread_v3", "mpe", theirs.CONFIG, "MPE simple_spread")
    config = dict(theirs.OVERCOOKED_CONFIG, ENV_KWARGS={"layout": layout})
    return Task(f"jaxmarl/Overcooked_{layout}", "overcooked", config, f"Overcooked {layout}")


def run_ours(t: Task, timesteps: int, seeds: int,
             ablate_truncation: bool = False) -> dict[str, Any]:
    """The registry's `ippo` at the task's preset; with `ablate_truncation`, on the environment
    whose time limit terminates."""
    import rl_envs

    env = rl_envs.make(t.env_id)
    if ablate_truncation:
        env = time_limit_as_termination(env)
    m, config, compile_s, run_s = train_seeds("ippo", t.preset, env, timesteps, seeds)
    return summary(m["episode_return_sum"], m["episode_count"], config.batch_size, compile_s,
                   run_s)


def run_theirs(t: Task, timesteps: int, seeds: int) -> dict[str, Any]:
    config = theirs.with_timesteps(dict(t.config, SEQ_ORTHOGONAL=True), timesteps)
    keys = jax.random.split(jax.random.PRNGKey(config["SEED"]), seeds)
    fn, compile_s = timed_compile(jax.jit(jax.vmap(theirs.make_train(config))), keys)
    t0 = time.perf_counter()
    m = jax.block_until_ready(fn(keys))["metrics"]
    return summary(m["episode_return_sum"], m["episode_count"],
                   config["NUM_ENVS"] * config["NUM_STEPS"], compile_s,
                   time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=["mpe", "overcooked"], default="mpe")
    ap.add_argument("--layout", default="cramped_room", help="Overcooked's layout")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--timesteps", type=int, default=None,
                    help="environment steps per seed (default: the yaml's, 1e7 or 5e6)")
    ap.add_argument("--figure", default=None, help="default: docs/figures/ippo-mpe.png, or "
                    "ippo-overcooked-LAYOUT.png")
    ap.add_argument("--ablate-truncation", action="store_true",
                    help="also ours with the time limit as a termination (JaxMARL's done flag)")
    a = ap.parse_args()
    t = task(a.task, a.layout)
    timesteps = a.timesteps or t.config["TOTAL_TIMESTEPS"]
    name = "ippo-mpe" if a.task == "mpe" else f"ippo-overcooked-{a.layout}"
    figure = Path(a.figure or REPO / "docs" / "figures" / f"{name}.png")
    results = {"ours": run_ours(t, timesteps, a.seeds)}
    if a.ablate_truncation:
        results["ours, time limit as termination"] = run_ours(t, timesteps, a.seeds, True)
    results["jaxmarl"] = run_theirs(t, timesteps, a.seeds)
    print(f"IPPO, {t.env_id}, {timesteps:,} environment steps x {a.seeds} seeds; "
          "team return of the training episodes that ended in the last 5% of updates")
    print_table(results, 2)
    plot(results, figure, f"IPPO on {t.title}, {timesteps:,} steps")
    record = {k: {f: v for f, v in r.items() if f != "curve"} for k, r in results.items()}
    figure.with_suffix(".json").write_text(json.dumps(
        {"task": t.env_id, "timesteps": timesteps, "seeds": a.seeds, **record}, indent=1) + "\n")
    print(f"figure {figure}")


if __name__ == "__main__":
    main()
