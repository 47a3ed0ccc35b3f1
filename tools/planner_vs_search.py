"""A planner's members, playing with their search, against one built-in player of their game:
win / draw / loss with Wilson 95% intervals, half the games first. `rl arena` plays every pair
of a round robin; this plays only the matches a planner's claim is about (e.g. AlphaZero on
tic_tac_toe against a 1000-simulation search, whose every move is dear).

    uv run python tools/planner_vs_search.py RUN_DIR --opponent mcts:1000 --games 1000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax


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
    args = parser.parse_args()

    run = load_agent(args.run_dir)
    engine = rl_envs.arena(run.env_id)
    opponent = engine.builtin(args.opponent)

    other = Entrant(args.opponent, opponent)
    for i, me in enumerate(search_entrants(run, args.simulations)):
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
