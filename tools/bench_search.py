"""AlphaZero's search against mctx's own: `rl_algos.alphazero.search.gumbel_muzero_policy` (the
backup batched over the games) and `mctx.gumbel_muzero_policy`, each the whole of one self-play
move (`alphazero.train.make_search`: the root's evaluation, the simulations, the improved
policy), from the same roots, with the same network and key.

Workloads (the `board_game` preset's network: 3 dense layers of 256, untrained; roots are games
after 0-6 random moves, as self-play meets them):

  gate          pgx/tic_tac_toe, 64 simulations, 2 members x 64 games under `vmap`: the
                AlphaZero learning gate's run (`tests/gates/test_learning_gates.py`)
  connect_four  pgx/connect_four, the preset's 32 simulations, 64 games, one member

Compile apart, one round untimed; then `--repeats` rounds, each timing both (the order
alternating), a median of 5 calls each; the ratio is ours/mctx's run time per round, its median
printed with the rounds'. The chosen moves of the two are compared (the searches agree up to
float32 rounding of the values).

    uv run python tools/bench_search.py [--workload gate|connect_four] [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import mctx
import numpy as np

import rl_algos
import rl_envs
from rl_algos.alphazero.search import gumbel_muzero_policy
from rl_algos.alphazero.train import make_search, network_model
from rl_algos.common.spec import game_model

WORKLOADS = {  # env, simulations, members, games per member
    "gate": ("pgx/tic_tac_toe", 64, 2, 64),
    "connect_four": ("pgx/connect_four", 32, 1, 64),
}


def roots(game, key: jax.Array, n: int):
    """`n` games, game i after `i % 7` uniformly random moves (a move that would end its game
    is skipped, so every root has a move to search)."""

    def opened(k: jax.Array, moves: jax.Array):
        def move(i, s):
            v = game.view(s)
            a = jax.random.categorical(jax.random.fold_in(k, i), jnp.where(v.legal, 0.0, -1e9))
            nxt = game.step(s, a, k)
            keep = (i < moves) & ~game.view(nxt).over
            return jax.tree.map(lambda x, y: jnp.where(keep, x, y), nxt, s)
        return jax.lax.fori_loop(0, 6, move, game.init(k))

    return jax.vmap(opened)(jax.random.split(key, n), jnp.arange(n) % 7)


def timed(f, *args) -> float:
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="gate")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    env_id, sims, members, games = WORKLOADS[args.workload]
    env = rl_envs.make(env_id)
    spec = rl_algos.get("alphazero")
    config = dataclasses.replace(spec.config_cls(), **spec.presets["board_game"].config,
                                 num_simulations=sims)
    game = game_model(env, "alphazero")
    params, static = eqx.partition(network_model(env, config)(jax.random.PRNGKey(0)),
                                   eqx.is_array)
    states = jax.tree.map(lambda x: x.reshape(members, games, *x.shape[1:]),
                          roots(game, jax.random.PRNGKey(1), members * games))
    keys = jax.random.split(jax.random.PRNGKey(2), members)
    programs = {}
    for name, policy in (("ours", gumbel_muzero_policy), ("mctx", mctx.gumbel_muzero_policy)):
        search = make_search(game, static, config, 1.0, policy=policy)
        f = jax.jit(jax.vmap(lambda s, k, search=search: search(params, s, k)[1].action))
        t = time.perf_counter()
        jax.block_until_ready(f(states, keys))
        programs[name] = f
        print(f"{name:5s} compile {time.perf_counter() - t:6.2f} s", flush=True)
    same = np.mean(np.asarray(programs["ours"](states, keys))
                   == np.asarray(programs["mctx"](states, keys)))
    print(f"{args.workload}: {env_id}, {sims} simulations, {members} x {games} games; "
          f"the same move in {same:.1%} of them")
    times: dict[str, list[float]] = {"ours": [], "mctx": []}
    for f in programs.values():  # a first round untimed: the first calls after compiling vary
        timed(f, states, keys)
    for r in range(args.repeats):
        for name in (("ours", "mctx") if r % 2 == 0 else ("mctx", "ours")):
            times[name].append(timed(programs[name], states, keys))
    ratios = [a / b for a, b in zip(times["ours"], times["mctx"], strict=True)]
    for name, ts in times.items():
        moves = members * games / statistics.median(ts)
        print(f"{name:5s} {statistics.median(ts) * 1e3:7.1f} ms a move ({moves:,.0f} moves/s)")
    print(f"ours/mctx run time: {statistics.median(ratios):.3f}x (rounds: "
          f"{', '.join(f'{x:.3f}' for x in ratios)})")


if __name__ == "__main__":
    main()
