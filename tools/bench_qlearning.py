"""Tabular Q-learning throughput on native/GridWorld (5 x 5): agent-steps per second for 1 agent
and for 30 agents trained at once (vmapped), compile time apart from run time.

An agent-step is one environment transition used for one Q-learning update (an agent stepping
`num_envs` environments makes `num_envs` agent-steps per step). The whole run is one compiled
program (`jit(vmap(train))`); the timed part is the compiled call until `block_until_ready`,
repeated `--repeats` times (the best is reported, with the median beside it).

    uv run python tools/bench_qlearning.py [--agents 1,30] [--num-envs 64] [--steps 2e7]
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
    p.add_argument("--num-envs", type=int, default=64, help="environments per agent")
    p.add_argument("--steps", type=float, default=3e7,
                   help="agent-steps per run, all agents together")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, {os.cpu_count()} CPU cores; "
          f"native/GridWorld 5x5, {args.num_envs} envs per agent")
    for n in (int(x) for x in args.agents.split(",")):
        r = bench(n, args.num_envs, int(args.steps) // n, args.repeats)
        print(f"{r['agents']:>3} agent(s): {r['agent_steps']:,} agent-steps in {r['best_s']:.3f} s "
              f"(median {r['median_s']:.3f} s) -> {r['best_rate'] / 1e6:,.1f}M agent-steps/s "
              f"(median {r['median_rate'] / 1e6:,.1f}M); compile {r['compile_s']:.2f} s; "
              f"final return {r['final_return']:.2f}")


if __name__ == "__main__":
    main()
