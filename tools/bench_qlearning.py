"""Tabular Q-learning throughput on native/GridWorld (5 x 5): agent-steps per second for 1 agent
and for 30 agents trained at once (vmapped), compile time apart from run time.

An agent-step is one environment transition used for one Q-learning update (an agent stepping
`num_envs` environments makes `num_envs` agent-steps per step). The whole run is one compiled
program (`jit(vmap(train))`); the timed part is the compiled call until `block_until_ready`,
repeated `--repeats` times (the best is reported, with the median beside it).

    uv run python tools/bench_qlearning.py [--agents 1,30] [--num-envs 512,32]
    taskset -c 0 uv run python tools/bench_qlearning.py      # pinned to one core [--steps 2e7]
"""

from __future__ import annotations

import argparse
import os
import time

import jax
import jax.numpy as jnp
import numpy as np


def bench(num_agents: int, num_envs: int, total_per_agent: int, repeats: int) -> dict:
    import rl_envs
    from rl_algos.common import hparams_as_arrays
    from rl_algos.qlearning import QLearningConfig, QLearningHParams, make_train

    env = rl_envs.make("native/GridWorld")
    num_steps = 1000
    per_update = num_envs * num_steps
    total_per_agent = max(per_update, total_per_agent // per_update * per_update)
    config = QLearningConfig(total_timesteps=total_per_agent, num_envs=num_envs,
                             num_steps=num_steps)
    train = make_train(env, config)
    keys = jax.random.split(jax.random.PRNGKey(0), num_agents)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (num_agents,)),
                      hparams_as_arrays(QLearningHParams()))
    t0 = time.perf_counter()
    compiled = jax.jit(jax.vmap(train)).lower(keys, hp).compile()
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = compiled(keys, hp)
        jax.block_until_ready(res)
        times.append(time.perf_counter() - t0)
    steps = num_agents * total_per_agent
    m = res.metrics
    final = float(np.sum(m["episode_return_sum"][:, -1]) / np.sum(m["episode_count"][:, -1]))
    return {"agents": num_agents, "num_envs": num_envs, "agent_steps": steps,
            "compile_s": compile_s, "best_s": min(times), "median_s": float(np.median(times)),
            "best_rate": steps / min(times), "median_rate": steps / float(np.median(times)),
            "final_return": final}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--agents", default="1,30")
    p.add_argument("--num-envs", default="512,32",
                   help="environments per agent, one value per entry of --agents (or one for all)"
                        "; the defaults keep ~1k environment slots per step, which fit in cache")
    p.add_argument("--steps", type=float, default=3e7,
                   help="agent-steps per run, all agents together")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    agents = [int(x) for x in args.agents.split(",")]
    envs = [int(x) for x in args.num_envs.split(",")]
    envs = envs * len(agents) if len(envs) == 1 else envs
    if len(envs) != len(agents):
        p.error("--num-envs needs one value, or one per entry of --agents")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, {cores} usable CPU core(s) of "
          f"{os.cpu_count()}; native/GridWorld 5x5")
    for n, e in zip(agents, envs, strict=True):
        r = bench(n, e, int(args.steps) // n, args.repeats)
        print(f"{r['agents']:>3} agent(s) x {e} envs: {r['agent_steps']:,} agent-steps in "
              f"{r['best_s']:.3f} s "
              f"(median {r['median_s']:.3f} s) -> {r['best_rate'] / 1e6:,.1f}M agent-steps/s "
              f"(median {r['median_rate'] / 1e6:,.1f}M); compile {r['compile_s']:.2f} s; "
              f"final return {r['final_return']:.2f}")


if __name__ == "__main__":
    main()
