"""Compile time and random-policy throughput of an XLand-MiniGrid environment, xminigrid's own
env (under its `GymAutoResetWrapper`, as its training script steps it) against the same env
behind the port (`rl_envs.make("xminigrid/...")` under rl-core's `AutoReset` and `VectorEnv`,
the stack training uses), with the view one-hot (the adapter's default) and as the ids, in one
process: reset and a 16-step rollout of `--envs` environments, each compiled apart and timed,
then the rollout's env steps/s (median of 5; `bench_craftax.measure`).

    uv run python tools/bench_xminigrid.py MiniGrid-Empty-8x8 --envs 1024
    uv run python tools/bench_xminigrid.py XLand-MiniGrid-R1-9x9 --benchmark FILE

XLA's persistent compilation cache is off here, so every compile is a first compile.
"""

from __future__ import annotations

import argparse
from typing import Any

import jax
from bench_craftax import measure, vector_env_fns


def xminigrid_own(name: str, n: int, benchmark: str | None) -> tuple[Any, Any]:
    import xminigrid
    from xminigrid.benchmarks import load_benchmark_from_path
    from xminigrid.wrappers import GymAutoResetWrapper

    env, params = xminigrid.make(name)
    env = GymAutoResetWrapper(env)
    if benchmark is not None:
        params = params.replace(ruleset=load_benchmark_from_path(benchmark).get_ruleset(0))
    actions = env.num_actions(params)

    def reset(key):
        return jax.vmap(env.reset, in_axes=(None, 0))(params, jax.random.split(key, n))

    def rollout(ts, key):
        def body(t, k):
            a = jax.random.randint(k, (n,), 0, actions)
            t = jax.vmap(env.step, in_axes=(None, 0, 0))(params, t, a)
            return t, t.reward.sum()
        return jax.lax.scan(body, ts, jax.random.split(key, 16))

    return reset, rollout


def ours(name: str, n: int, benchmark: str | None, one_hot: bool) -> tuple[Any, Any]:
    import rl_envs
    from rl_core import AutoReset, VectorEnv

    kw = {} if benchmark is None else {"benchmark": benchmark, "ruleset": 0}
    venv = VectorEnv(AutoReset(rl_envs.make(f"xminigrid/{name}", one_hot=one_hot, **kw)), n)
    return vector_env_fns(venv, n)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", help="e.g. MiniGrid-Empty-8x8 or XLand-MiniGrid-R1-9x9")
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--benchmark", default=None, help="an XLand world's benchmark file (ruleset 0)")
    args = p.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)
    print(f"{args.name}, {args.envs} envs, {jax.device_count()} device(s)", flush=True)
    measure("xminigrid's own", xminigrid_own(args.name, args.envs, args.benchmark), args.envs)
    measure("rl_envs, one-hot", ours(args.name, args.envs, args.benchmark, True), args.envs)
    measure("rl_envs, ids", ours(args.name, args.envs, args.benchmark, False), args.envs)


if __name__ == "__main__":
    main()
