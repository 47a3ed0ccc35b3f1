"""Members vs throughput: PPO on CartPole-v1 with M members (seeds x hyperparameter points) in one
compiled program, driven exactly as `rl run` / `rl sweep` drive it (compile_members + run_members,
members sharded over every device when there are several).

Each member count runs in its own process with a timeout, so a run that stops making progress (see
the CPU freeze noted in the ecosystem notes) is reported instead of hanging the benchmark. Compile
time and run time are measured apart; steps/s counts every member's environment steps.

    uv run python tools/bench_scale.py [--members 1,8,64,256] [--timesteps 32768] [--devices N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def worker(members: int, timesteps: int, devices: int | None) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import rl_envs
    from rl_algos.common import hparams_as_arrays
    from rl_algos.ppo import PPOConfig, PPOHParams, make_algorithm
    from rl_core import compile_members, member_mesh, run_members

    config = PPOConfig(total_timesteps=timesteps)  # 4 envs x 128 steps, 4 epochs x 4 minibatches
    algo = make_algorithm(rl_envs.make("gymnax/CartPole-v1"), config)
    keys = jax.random.split(jax.random.PRNGKey(0), members)
    # A learning-rate sweep over the members, as `rl sweep --grid lr=...` would build it.
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (members,)), hparams_as_arrays(PPOHParams()))
    hp = hp._replace(lr=jnp.asarray(np.geomspace(1e-4, 1e-3, members), jnp.float32))
    n_dev = devices or len(jax.devices())
    mesh = member_mesh(n_dev) if n_dev > 1 else None
    compiled = compile_members(algo, keys, hp, mesh=mesh)
    t0 = time.perf_counter()
    result = run_members(compiled, keys, hp)
    jax.block_until_ready(result.state)
    run_s = time.perf_counter() - t0
    steps = algo.num_updates * algo.steps_per_update
    return {"members": members, "devices": n_dev, "platform": jax.devices()[0].platform,
            "steps_per_member": steps, "compile_s": compiled.compile_seconds, "run_s": run_s,
            "steps_per_s": members * steps / run_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", default="1,8,64,256")
    ap.add_argument("--timesteps", type=int, default=32768, help="environment steps per member")
    ap.add_argument("--devices", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per member count")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.timesteps, args.devices)))
        return
    print("| members | devices | steps/member | compile s | run s | steps/s (all members) "
          "| steps/s per member |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for m in (int(x) for x in args.members.split(",")):
        cmd = [sys.executable, __file__, "--worker", str(m), "--timesteps", str(args.timesteps)]
        if args.devices:
            cmd += ["--devices", str(args.devices)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                               env={**os.environ})
        except subprocess.TimeoutExpired:
            print(f"| {m} | | | | timed out after {args.timeout:.0f} s (no result) | | |",
                  flush=True)
            continue
        if p.returncode != 0:
            print(f"| {m} | | | | failed: {p.stderr.strip().splitlines()[-1][:80]} | | |",
                  flush=True)
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"| {r['members']} | {r['devices']} ({r['platform']}) | {r['steps_per_member']:,} "
              f"| {r['compile_s']:.1f} | {r['run_s']:.1f} | {r['steps_per_s']:,.0f} "
              f"| {r['steps_per_s'] / r['members']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
