"""Raw stepping speed of brax environments through the adapter, against brax's own wrappers.

For each environment and physics backend, in this one process, two programs step N environments
with uniform random actions for T steps inside one `lax.scan`:
* ours: `rl_envs.make("brax/<name>", backend=...)` under rl-core's `EpisodeStatistics` ->
  `AutoReset` -> `VectorEnv(N)` (a fresh random start per episode, the true final observation kept),
  the environments' keys for all steps split up front as `rl_core.rollout` does;
* brax: `brax.envs.create(name, backend=..., episode_length=1000, batch_size=N)` (brax's
  `EpisodeWrapper` + `VmapWrapper` + `AutoResetWrapper`, which restores the cached first state).
Compile time (`jit(...).lower(...).compile()`) and run time (the compiled call until
`block_until_ready`, best of `--repeats`) are reported apart; the ratio is ours/brax in steps/s.
Each (environment, backend) runs in a child process with a time limit, so a slow compile (mjx,
humanoid) is reported as such instead of stalling the table.

    uv run python tools/bench_brax.py [--envs inverted_pendulum,hopper] [--backends spring]
        [--num-envs 256] [--steps 200] [--limit 600]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time


def measure(name: str, backend: str, num_envs: int, steps: int, repeats: int) -> dict:
    import jax

    import rl_envs
    from rl_core import AutoReset, EpisodeStatistics, VectorEnv

    env = rl_envs.make(f"brax/{name}", backend=backend)
    act_dim = env.action_space.shape[0]
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), num_envs)

    def ours(key):
        state, _ = venv.reset(key)
        # As rl_core.rollout does: the stack's per-step keys (one per environment and per
        # AutoReset) split for all steps in one call, not split again inside every step.
        k_act, k_env = jax.random.split(key)
        env_keys = jax.random.split(k_env, steps * math.prod(venv.step_key_shape)).reshape(
            steps, *venv.step_key_shape, *k_env.shape)

        def body(s, ks):
            k, k_s = ks
            a = jax.random.uniform(k, (num_envs, act_dim), minval=-1.0, maxval=1.0)
            s, ts = venv.step(s, a, k_s)
            return s, ts.reward.sum() + ts.observation.sum()  # keeps the physics live

        return jax.lax.scan(body, state, (jax.random.split(k_act, steps), env_keys))[1].sum()

    from brax import envs as benvs

    benv = benvs.create(name, backend=backend, episode_length=1000, batch_size=num_envs)

    def theirs(key):
        state = benv.reset(key)  # VmapWrapper splits it into num_envs keys

        def body(s, k):
            a = jax.random.uniform(k, (num_envs, act_dim), minval=-1.0, maxval=1.0)
            s = benv.step(s, a)
            return s, s.reward.sum() + s.obs.sum()

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1].sum()

    out = {"env": name, "backend": backend, "num_envs": num_envs, "steps": steps}
    key = jax.random.PRNGKey(0)
    for label, fn in (("ours", ours), ("brax", theirs)):
        t0 = time.perf_counter()
        compiled = jax.jit(fn).lower(key).compile()
        out[f"{label}_compile_s"] = time.perf_counter() - t0
        best = float("inf")
        for r in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(jax.random.PRNGKey(r + 1)))
            best = min(best, time.perf_counter() - t0)
        out[f"{label}_run_s"] = best
        out[f"{label}_sps"] = num_envs * steps / best
    out["ratio"] = out["ours_sps"] / out["brax_sps"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", default="")
    p.add_argument("--backends", default="generalized,positional,spring,mjx")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--limit", type=int, default=600, help="seconds per (env, backend)")
    p.add_argument("--child", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        name, backend = a.child.split(":")
        print(json.dumps(measure(name, backend, a.num_envs, a.steps, a.repeats)))
        return
    from rl_envs import brax_adapter

    names = a.envs.split(",") if a.envs else brax_adapter.ENV_NAMES
    print(f"{'env':26s} {'backend':12s} {'compile ours/brax s':>20s} "
          f"{'steps/s ours':>13s} {'steps/s brax':>13s} {'ratio':>6s}", flush=True)
    for name in names:
        for backend in a.backends.split(","):
            cmd = [sys.executable, __file__, "--child", f"{name}:{backend}",
                   "--num-envs", str(a.num_envs), "--steps", str(a.steps),
                   "--repeats", str(a.repeats)]
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=a.limit)
                r = json.loads(res.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                print(f"{name:26s} {backend:12s} over the {a.limit}s limit", flush=True)
                continue
            except (json.JSONDecodeError, IndexError):
                err = res.stderr.strip().splitlines()[-1:] or ["?"]
                print(f"{name:26s} {backend:12s} failed: {err[0][:80]}", flush=True)
                continue
            print(f"{name:26s} {backend:12s} {r['ours_compile_s']:9.1f}/{r['brax_compile_s']:<9.1f}"
                  f" {r['ours_sps']:13,.0f} {r['brax_sps']:13,.0f} {r['ratio']:6.2f}", flush=True)


if __name__ == "__main__":
    main()
