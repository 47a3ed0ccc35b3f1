"""A planner's members, playing with their search, against one built-in player of their game:
win / draw / loss with Wilson 95% intervals, half the games first. `rl arena` plays every pair
of a round robin; this plays only the matches a planner's claim is about (e.g. AlphaZero on
tic_tac_toe against a 1000-simulation search, whose every move is dear).

    uv run python tools/planner_vs_search.py RUN_DIR --opponent mcts:1000 --games 1000

`--move-times` also prints what a move costs each side: both players choose a move in the same
batch of positions (`--positions` games, each advanced by a few random moves), compiled apart,
the median of repeated timings, as thinking time per move.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp


def sample_positions(engine: Any, count: int, key: jax.Array, max_moves: int = 12) -> Any:
    """`count` positions of the engine's game (leaves `[count, ...]`, pgx states): game i
    opened by `i % (max_moves + 1)` uniformly random legal moves (fewer where its game ends
    first)."""
    import pgx

    env = pgx.make(engine.name)

    def one(k: jax.Array, moves: jax.Array) -> Any:
        k_init, k_moves = jax.random.split(k)

        def body(i, s):
            k_a, k_s = jax.random.split(jax.random.fold_in(k_moves, i))
            a = jax.random.categorical(k_a, jnp.where(s.legal_action_mask, 0.0, -jnp.inf))
            nxt = env.step(s, a.astype(jnp.int32), k_s)
            go = (i < moves) & ~nxt.terminated & ~nxt.truncated
            return jax.tree.map(lambda x, y: jnp.where(go, x, y), nxt, s)

        return jax.lax.fori_loop(0, max_moves, body, env.init(k_init))

    keys = jax.random.split(key, count)
    return jax.jit(jax.vmap(one))(keys, jnp.arange(count) % (max_moves + 1))


def seconds_per_move(player: Any, states: Any, key: jax.Array, repeats: int = 5) -> float:
    """The median over `repeats` timings of `player` choosing a move in every position of
    `states` (one batched, compiled call; the compile is not timed), per position."""
    count = jax.tree.leaves(states)[0].shape[0]
    obs = jnp.asarray(states.observation, jnp.float32)
    program = jax.jit(jax.vmap(player))
    keys = jax.random.split(key, count)
    jax.block_until_ready(program(states, obs, states.legal_action_mask, keys))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(program(states, obs, states.legal_action_mask, keys))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / count


def main() -> None:
    import rl_envs
    from rl_cli.arena import Entrant, match_record, play_match, search_entrants
    from rl_cli.evaluate import load_agent

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--opponent", default="mcts:1000")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--simulations", type=int, default=None,
                        help="the planner's simulations a move (default: the run's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--move-times", action="store_true",
                        help="also time a move of each side on the same positions")
    parser.add_argument("--positions", type=int, default=64)
    args = parser.parse_args()

    run = load_agent(args.run_dir)
    engine = rl_envs.arena(run.env_id)
    opponent = engine.builtin(args.opponent)

    other = Entrant(args.opponent, opponent)
    entrants = search_entrants(run, args.simulations)
    if args.move_times:
        key = jax.random.PRNGKey(args.seed)
        states = sample_positions(engine, args.positions, key)
        mine = seconds_per_move(entrants[0].player, states, key)
        theirs = seconds_per_move(opponent, states, key)
        print(f"a move, in batches of {args.positions} positions: {entrants[0].name} "
              f"{1e3 * mine:.2f} ms, {args.opponent} {1e3 * theirs:.2f} ms "
              f"(ratio {mine / theirs:.2f})")
    for i, me in enumerate(entrants):
        t0 = time.perf_counter()
        score, first, finished = play_match(engine, me, other, args.games,
                                            jax.random.PRNGKey(args.seed + i))
        r = match_record(me.name, other.name, score, first, finished, time.perf_counter() - t0)
        lo, hi = r["losses_ci95"]
        print(f"{me.name} vs {other.name}: {r['wins']} won, {r['draws']} drawn, {r['losses']} "
              f"lost of {r['games']} ({r['a_first']} first, {r['unfinished']} unfinished); "
              f"losses 95% CI {100 * lo:.2f}-{100 * hi:.2f}%; {r['seconds']:.0f} s")


if __name__ == "__main__":
    main()
