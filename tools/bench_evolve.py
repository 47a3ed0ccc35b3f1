"""Generations per minute of `rl evolve --meta drift` on CartPole-v1, against a peer measured in the
same process: the same members trained one after another by a one-member program (what a loop
over `rl run` calls would do, without their start-up).

The population program is the one `rl evolve` compiles (`rl_algos.evolve.make_evaluate`, vmapped
over members and inner seeds; sharded over every device when there are several). Compile time is
reported apart from run time; one generation = ask + every member's inner training + tell.

    uv run python tools/bench_evolve.py [--population 32] [--inner-seeds 2] [--steps 30000]
        [--generations 3] [--no-peer]

The issue's GPU figure is `--population 256 --inner-seeds 1 --steps 100000` on a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--population", type=int, default=32)
    ap.add_argument("--inner-seeds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30_000, help="environment steps per inner agent")
    ap.add_argument("--generations", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true", help="skip the one-member-at-a-time peer")
    args = ap.parse_args()

    import jax
    import numpy as np

    import rl_envs
    from rl_algos.evolve import (
        combine_fitness,
        get_target,
        initial_state,
        inner_keys,
        make_evaluate,
        make_strategy,
        run_generation,
    )
    from rl_algos.ppo import PPOConfig, PPOHParams
    from rl_core import member_mesh
    from rl_core.parallel import member_sharding, padded_size, replicated

    env = rl_envs.make("gymnax/CartPole-v1")
    config, hp = PPOConfig(total_timesteps=args.steps), PPOHParams(lr=2.5e-3)
    target = get_target("drift")
    template = target.init(jax.random.PRNGKey(1), 32, 0.5)
    p, s = args.population, args.inner_seeds
    strategy = make_strategy("open_es", p, template, 0.1, 0.05)
    root = jax.random.PRNGKey(0)
    state = initial_state(strategy, root, template)
    evaluate = make_evaluate(target, [env], config, hp)
    pop_shape = jax.eval_shape(lambda k: strategy.es.ask(k, state, strategy.params)[0], root)
    keys_shape = jax.ShapeDtypeStruct((1, s, 2), np.uint32)
    n_dev = len(jax.devices())

    t0 = time.perf_counter()
    if n_dev > 1 and padded_size(p, member_mesh(n_dev)) == p:
        mesh = member_mesh(n_dev)
        program = jax.jit(evaluate, in_shardings=(member_sharding(mesh), replicated(mesh)),
                          out_shardings=replicated(mesh)).lower(pop_shape, keys_shape).compile()
    else:
        program = jax.jit(evaluate).lower(pop_shape, keys_shape).compile()
    compile_s = time.perf_counter() - t0

    def fitness_of(returns, _ref):
        return combine_fitness(returns)

    run_generation(strategy, state, root, 0, program, 1, s, fitness_of)  # warm ask/tell jits
    t0 = time.perf_counter()
    for g in range(args.generations):
        state, res = run_generation(strategy, state, root, g, program, 1, s, fitness_of)
    gen_s = (time.perf_counter() - t0) / args.generations
    steps = config.num_updates * config.batch_size
    out = {"platform": jax.devices()[0].platform, "devices": n_dev, "population": p,
           "inner_seeds": s, "steps_per_inner_agent": steps, "compile_s": round(compile_s, 2),
           "seconds_per_generation": round(gen_s, 3),
           "generations_per_minute": round(60 / gen_s, 3),
           "inner_steps_per_s": round(p * s * steps / gen_s)}

    if not args.no_peer:
        one = jax.tree.map(lambda x: jax.ShapeDtypeStruct((1, *x.shape[1:]), x.dtype), pop_shape)
        t0 = time.perf_counter()
        single = jax.jit(evaluate).lower(one, keys_shape).compile()
        peer_compile = time.perf_counter() - t0
        pop, _ = strategy.es.ask(root, state, strategy.params)
        keys = inner_keys(root, 1, s)
        jax.block_until_ready(single(jax.tree.map(lambda x: x[:1], pop), keys))  # warm
        t0 = time.perf_counter()
        for i in range(p):
            jax.block_until_ready(single(jax.tree.map(lambda x, i=i: x[i:i + 1], pop), keys))
        peer_s = time.perf_counter() - t0
        out.update({"peer_compile_s": round(peer_compile, 2),
                    "peer_seconds_per_generation": round(peer_s, 3),
                    "speedup_vs_peer": round(peer_s / gen_s, 2)})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
