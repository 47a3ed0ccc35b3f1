"""Exact outcome of a run's greedy agents against the uniformly random player on pgx's
tic_tac_toe, and the positions its losses come from.

A sampled evaluation (`rl eval`, the results report's 200 games per seed) sees a loss rate of a
few tenths of a percent through its sampling noise. Tic-tac-toe is small enough to do without it:
with the agent's move fixed (its greedy action) and the opponent's uniform over the legal cells,
the probability of every outcome is a sum over the game tree, walked here once per seat (the
agent moves first in half the games: the adapter draws its seat). Every non-final position (4,520
of them) is put to each member's network in one batch.

Each loss is charged to the agent's last decision before it, which the opponent's winning move
follows:
  missed win:   the agent could have completed a line and did not;
  missed block: the opponent had one cell completing a line of its own (one or more lines through
                it), the agent had no win, and it did not take the cell;
  fork:         the opponent had two or more such cells: no move blocks them all, the fault lies
                in an earlier move.
A player that takes every win and blocks every single open line loses only through forks, and
optimal play loses no game at all.

    uv run python tools/tictactoe_exact.py RUN_DIR [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
EMPTY = -1
Board = tuple[int, ...]  # 9 cells, pgx's encoding: -1 empty, 0 for X (moves first), 1 for O
CAUSES = ("missed_win", "missed_block", "fork")


def winner(board: Board) -> int:
    """The colour with a full line, or -1."""
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return -1


def mover(board: Board) -> int:
    """The colour to move: X (0) when both have as many marks."""
    return 0 if board.count(0) == board.count(1) else 1


def is_final(board: Board) -> bool:
    return winner(board) >= 0 or EMPTY not in board


def play(board: Board, cell: int) -> Board:
    """The position after the mover marks `cell`."""
    return board[:cell] + (mover(board),) + board[cell + 1:]


def children(board: Board) -> list[Board]:
    """The positions after each legal move."""
    return [play(board, i) for i in range(9) if board[i] == EMPTY]


def positions() -> list[Board]:
    """Every non-final position reachable from the empty board, in a fixed order."""
    seen: dict[Board, None] = {}
    frontier = [tuple([EMPTY] * 9)]
    while frontier:
        board = frontier.pop()
        if board in seen or is_final(board):
            continue
        seen[board] = None
        frontier += children(board)
    return list(seen)


def planes(boards: list[Board]) -> tuple[np.ndarray, np.ndarray]:
    """The mover's observation (pgx's planes: the mover's marks, then the opponent's; float32
    `[N, 3, 3, 2]`, as the agents saw them) and the legal cells (bool `[N, 9]`)."""
    b = np.array(boards, np.int32)
    c = np.array([mover(x) for x in boards], np.int32)[:, None]
    obs = np.stack([b == c, b == 1 - c], -1).reshape(len(boards), 3, 3, 2).astype(np.float32)
    return obs, b == EMPTY


@cache
def completing_cells() -> dict[Board, tuple[frozenset[int], frozenset[int]]]:
    """Per non-final position, the cells with which the mover, then its opponent, would complete
    a line at once: the adapter's own look-ahead (`rl_envs.pgx_adapter.winning_moves`, the greedy
    player's rule), put to every position in one batch."""
    import jax

    from rl_envs.pgx_adapter import winning_moves

    boards = positions()
    obs, legal = planes(boards)
    own, other = obs[..., 0] > 0, obs[..., 1] > 0
    cells = jax.vmap(lambda a, b, m: winning_moves("tic_tac_toe", a, b, m))
    wins, threats = np.asarray(cells(own, other, legal)), np.asarray(cells(other, own, legal))
    return {b: (frozenset(np.flatnonzero(w).tolist()), frozenset(np.flatnonzero(t).tolist()))
            for b, w, t in zip(boards, wins, threats, strict=True)}


def greedy_moves(run_dir: Path, boards: list[Board]) -> np.ndarray:
    """Each member's greedy move in every position: int `[M, N]`."""
    import jax

    from rl_cli.errors import UserError
    from rl_cli.evaluate import load_agent

    try:
        run = load_agent(run_dir)
    except UserError as e:
        sys.exit(str(e))
    if run.env_id != "pgx/tic_tac_toe":
        sys.exit(f"{run_dir}: its agents play {run.env_id}; give a run on pgx/tic_tac_toe")
    if run.policy.step is not None:
        sys.exit(f"{run_dir}: its {run.algo} policy has memory, so its move depends on more than "
                 "the position; give a feed-forward run")
    obs, legal = planes(boards)
    n = len(boards)

    @jax.jit
    def act(agent: Any, key: jax.Array) -> jax.Array:
        return run.policy.act(agent, obs, run.policy.noise(key, (n,)), True, legal)[0]

    key = jax.random.key(0)
    moves = np.stack([np.asarray(act(run.member(i), key)) for i in range(len(run.members))])
    assert legal[np.arange(n), moves].all(), "a greedy move on an occupied cell"
    return moves


def analyse(move: dict[Board, int]) -> dict[str, Any]:
    """For the policy `move` (position -> cell): the exact outcome probabilities for the agent
    (first, second, and over its random seat), the loss probability charged to each cause, and
    the `faults` counts of the positions it reaches."""

    completing = completing_cells()

    @cache
    def value(board: Board, me: int, last: Board | None) -> tuple[float, ...]:
        """P(win, draw, loss) from `board` with the agent playing `me`, and the loss split as
        missed win, missed block, fork; `last` is the position of the agent's latest move."""
        w = winner(board)
        if w >= 0 or EMPTY not in board:
            return (float(w == me), float(w < 0), float(w == 1 - me), 0.0, 0.0, 0.0)
        if mover(board) == me:
            return value(play(board, move[board]), me, board)
        replies = children(board)
        total = np.zeros(6)
        for nxt in replies:
            if winner(nxt) == 1 - me:  # the loss is charged to the agent's latest move
                total += np.array((0, 0, 1, *blame(last)))
            else:
                total += value(nxt, me, last)
        return tuple(total / len(replies))

    def blame(last: Board | None) -> tuple[float, float, float]:
        """The cause of a loss, read from the position of the agent's latest move."""
        if last is None:  # no line is complete before the agent's first move
            raise AssertionError("a loss before the agent moved")
        wins, threats = completing[last]
        if wins:  # it lost, so it did not complete the line
            return (1.0, 0.0, 0.0)
        return (0.0, 1.0, 0.0) if len(threats) == 1 else (0.0, 0.0, 1.0)

    empty = tuple([EMPTY] * 9)
    first, second = np.array(value(empty, 0, None)), np.array(value(empty, 1, None))
    both = (first + second) / 2

    def named(names: tuple[str, ...], values: np.ndarray) -> dict[str, float]:
        return dict(zip(names, values.tolist(), strict=True))

    outcomes = ("win", "draw", "loss")
    out = {"first": named(outcomes, first[:3]), "second": named(outcomes, second[:3]),
           "overall": named(outcomes, both[:3]), "loss_by_cause": named(CAUSES, both[3:])}
    out["faults"] = faults(move, completing)
    return out


def faults(move: dict[Board, int],
           completing: dict[Board, tuple[frozenset[int], frozenset[int]]]) -> dict[str, int]:
    """Positions the agent reaches against the random player (either seat) where its move
    misses a win or a single block."""
    counts = {"positions": 0, "missed_win": 0, "missed_block": 0}
    seen: set[tuple[Board, int]] = set()
    frontier = [(tuple([EMPTY] * 9), me) for me in (0, 1)]
    while frontier:
        board, me = frontier.pop()
        if is_final(board) or (board, me) in seen:
            continue
        seen.add((board, me))
        if mover(board) == me:
            counts["positions"] += 1
            cell, (wins, threats) = move[board], completing[board]
            counts["missed_win"] += bool(wins) and cell not in wins
            counts["missed_block"] += (not wins and len(threats) == 1 and cell not in threats)
            frontier.append((play(board, cell), me))
        else:
            frontier += [(nxt, me) for nxt in children(board)]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a finished `rl run` on pgx/tic_tac_toe")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    boards = positions()
    moves = greedy_moves(args.run_dir, boards)
    rows = []
    print(f"{args.run_dir}: {len(boards)} positions; exact outcome against the random player")
    print(f"{'member':>7} {'win %':>7} {'draw %':>7} {'loss %':>7} {'as 1st':>7} "
          f"{'as 2nd':>7} | reached  missed win  missed block")
    for i, m in enumerate(moves):
        r = analyse(dict(zip(boards, m.tolist(), strict=True)))
        f = r["faults"]
        print(f"{i:>7} {100 * r['overall']['win']:7.2f} {100 * r['overall']['draw']:7.2f} "
              f"{100 * r['overall']['loss']:7.3f} {100 * r['first']['loss']:7.3f} "
              f"{100 * r['second']['loss']:7.3f} | {f['positions']:7d} {f['missed_win']:11d} "
              f"{f['missed_block']:13d}")
        rows.append(r)
    loss = np.array([r["overall"]["loss"] for r in rows])
    by = {c: float(np.mean([r["loss_by_cause"][c] for r in rows])) for c in CAUSES}
    print(f"mean loss {100 * loss.mean():.3f}% (worst member {100 * loss.max():.3f}%); of it "
          + ", ".join(f"{c.replace('_', ' ')} {100 * v:.3f}%" for c, v in by.items()))
    if args.json:
        args.json.write_text(json.dumps({"run": str(args.run_dir), "members": rows}, indent=1))


if __name__ == "__main__":
    main()
