"""Run with 4 (simulated) devices: PPO on CartPole, 4 seeds, once data-parallel (each agent's 4
environments split over the 4 devices, gradients averaged with pmean) and once on one device.
Writes each member's final return (and the data-parallel parameters' spread across devices) to
a JSON file for the calling test. Usage: python data_parallel_learning.py OUT.json TIMESTEPS"""

from __future__ import annotations

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_algorithm
from rl_core import (
    DATA_AXIS,
    DataAxis,
    compile_members,
    data_mesh,
    data_parallel,
    final_return,
    run_members,
)

NUM_SEEDS = 4


def final_returns(metrics: dict) -> list[float]:
    """Per member, the final return (`rl_core.final_return`, the CLI's definition)."""
    return final_return(np.asarray(metrics["episode_return_sum"]),
                        np.asarray(metrics["episode_count"])).tolist()


def main(out: str, timesteps: int) -> None:
    env = rl_envs.make("gymnax/CartPole-v1")
    config = PPOConfig(total_timesteps=timesteps)  # 4 envs x 128 steps, 4 minibatches
    keys = jax.random.split(jax.random.PRNGKey(0), NUM_SEEDS)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (NUM_SEEDS,)),
                      hparams_as_arrays(PPOHParams()))
    d = len(jax.devices())
    dp = data_parallel(make_algorithm(env, config, data_axis=DataAxis(DATA_AXIS, d)),
                       data_mesh(d))
    single = make_algorithm(env, config)
    report: dict = {"num_devices": d}
    for tag, algo in (("data_parallel", dp), ("single", single)):
        t0 = time.perf_counter()
        res = run_members(compile_members(algo, keys, hp), keys, hp)
        report[f"{tag}_seconds"] = time.perf_counter() - t0
        report[f"{tag}_final_returns"] = final_returns(res.metrics)
        report[f"{tag}_steps_per_update"] = algo.steps_per_update
        report[f"{tag}_episodes"] = float(res.metrics["episode_count"].sum())
        if tag == "data_parallel":
            w = np.asarray(jax.tree.leaves(res.state.train_state.params)[0])  # [M, D, ...]
            report["param_spread_across_devices"] = float(np.max(np.abs(w - w[:, :1])))
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
