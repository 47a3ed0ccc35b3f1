"""Mean episodic return of a uniformly random *legal* policy on any registered environment, with
the evaluation `rl run` reports (undiscounted returns of the episodes that end, through the same
wrapper stack: EpisodeStatistics -> AutoReset -> VectorEnv). The baseline a learning claim is
compared against. In a multi-agent environment every agent acts at random and the return is the
team's (the sum of its agents' returns, as `rl run` reports it).

    uv run python tools/random_policy_return.py jumanji/Snake-v1 --num-envs 64 --num-steps 5000
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common import episode_metrics, make_vector_env
from rl_core import rollout


def random_policy_return(env_id: str, num_envs: int, num_steps: int, seed: int) -> dict:
    env = rl_envs.make(env_id)
    venv = make_vector_env(env, num_envs)
    space = env.action_space
    actors = venv.num_envs  # num_envs, times the agents of a multi-agent environment
    agents = actors // num_envs

    def policy(ts, key):
        mask = ts.info.get("action_mask")
        keys = jax.random.split(key, actors)
        if mask is None:
            return jax.vmap(space.sample)(keys), {}
        return jax.vmap(space.sample)(keys, mask), {}

    @jax.jit
    def run(key):
        k_reset, k_run = jax.random.split(key)
        state, ts = venv.reset(k_reset)
        _, traj = rollout(venv, policy, state, ts, k_run, num_steps)
        done = traj.info.get("episode_over", jnp.logical_or(traj.terminated, traj.truncated))
        return episode_metrics(traj.info, traj.terminated, traj.truncated), jnp.where(
            done, traj.info["episode_return"], jnp.nan)

    t0 = time.perf_counter()
    totals, per_episode = jax.block_until_ready(run(jax.random.PRNGKey(seed)))
    seconds = time.perf_counter() - t0
    returns = np.asarray(per_episode)
    returns = returns[np.isfinite(returns)]  # per agent: the same spread as per episode
    count = float(totals["episode_count"])  # each agent counts its team's episode
    return {"env": env_id, "episodes": int(count) // agents,
            "mean_return": float(totals["episode_return_sum"]) / max(count, 1.0),
            "std_return": float(returns.std()) if returns.size else float("nan"),
            "mean_length": float(totals["episode_length_sum"]) / max(count, 1.0),
            "steps": num_envs * num_steps, "seconds_incl_compile": seconds}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("env_id")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--num-steps", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    r = random_policy_return(a.env_id, a.num_envs, a.num_steps, a.seed)
    print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
