"""Compile time and random-policy throughput of a Craftax environment, Craftax's own env against
the same env behind the port (`rl_envs.make("craftax/...")`, `VectorEnv`), behind the port with
rl-core's `AutoReset` (a reset computed at every step of every environment), and with
`OptimisticResetVectorEnv` (as training steps it: `--envs / 16` resets per step, handed to the
environments that ended), in one process: reset and a 16-step rollout of `--envs` environments,
each compiled apart and timed, then the rollout's env steps/s (median of 5).

    uv run python tools/bench_craftax.py Craftax-Classic-Symbolic-v1 --envs 256

XLA's persistent compilation cache is off here, so every compile is a first compile.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax


def craftax_own(name: str, n: int):
    from craftax.craftax_env import make_craftax_env_from_name

    env = make_craftax_env_from_name(name, auto_reset=False)
    params = env.default_params

    def reset(key):
        return jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n), params)[1]

    def rollout(state, key):
        def body(s, k):
            a = jax.random.randint(k, (n,), 0, env.num_actions)
            _, s, r, _, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(k, n), s, a, params)
            return s, r.sum()
        return jax.lax.scan(body, state, jax.random.split(key, 16))

    return reset, rollout


def ours(name: str, n: int, resets: str = "none"):
    """Our env's reset and rollout: `resets` 'none' (no auto-reset), 'auto' (`AutoReset`) or
    'optimistic' (`OptimisticResetVectorEnv` at the adapter's ratio)."""
    import rl_envs
    from rl_core import AutoReset, OptimisticResetVectorEnv, VectorEnv

    env = rl_envs.make(f"craftax/{name}")
    venv = {"none": lambda: VectorEnv(env, n), "auto": lambda: VectorEnv(AutoReset(env), n),
            "optimistic": lambda: OptimisticResetVectorEnv(env, n, env.optimistic_reset_ratio),
            }[resets]()
    return vector_env_fns(venv, n)


def vector_env_fns(venv, n: int):
    """A `VectorEnv`'s reset and 16-step random-action rollout, as `measure` times them."""
    actions = venv.action_space.n

    def reset(key):
        return venv.reset(key)[0]

    def rollout(state, key):
        def body(s, k):
            a = jax.random.randint(k, (n,), 0, actions)
            s, ts = venv.step(s, a, k)
            return s, ts.reward.sum()
        return jax.lax.scan(body, state, jax.random.split(key, 16))

    return reset, rollout


def measure(label: str, fns, n: int) -> None:
    reset, rollout = fns
    key = jax.random.PRNGKey(0)
    t0 = time.perf_counter()
    reset_c = jax.jit(reset).lower(key).compile()
    t1 = time.perf_counter()
    state = reset_c(key)
    roll_c = jax.jit(rollout).lower(state, key).compile()
    t2 = time.perf_counter()
    jax.block_until_ready(roll_c(state, key))
    times = []
    for i in range(5):
        t = time.perf_counter()
        state, r = roll_c(state, jax.random.PRNGKey(i + 1))
        jax.block_until_ready(r)
        times.append(time.perf_counter() - t)
    print(f"{label:>16}: reset compile {t1 - t0:6.1f} s, rollout compile {t2 - t1:6.1f} s, "
          f"{16 * n / statistics.median(times):>9,.0f} env steps/s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", help="e.g. Craftax-Classic-Symbolic-v1 or Craftax-Symbolic-v1")
    p.add_argument("--envs", type=int, default=256)
    args = p.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)
    print(f"{args.name}, {args.envs} envs, {jax.device_count()} device(s)", flush=True)
    measure("craftax's own", craftax_own(args.name, args.envs), args.envs)
    measure("rl_envs", ours(args.name, args.envs), args.envs)
    measure("+ AutoReset", ours(args.name, args.envs, "auto"), args.envs)
    measure("+ optimistic", ours(args.name, args.envs, "optimistic"), args.envs)


if __name__ == "__main__":
    main()
