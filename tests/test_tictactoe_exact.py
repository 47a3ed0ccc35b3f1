"""The exact tic-tac-toe analysis (tools/tictactoe_exact.py): its positions and observations are
pgx's, and its outcome probabilities are the ones play converges to."""

from __future__ import annotations

import importlib.util
import random
import sys
from functools import cache
from pathlib import Path

import numpy as np

TOOL = Path(__file__).resolve().parents[1] / "tools" / "tictactoe_exact.py"


def _tool():
    spec = importlib.util.spec_from_file_location("tictactoe_exact", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_positions_and_planes_are_pgx_s() -> None:
    import jax
    import pgx

    t = _tool()
    boards = t.positions()
    # 5,478 legal positions, 958 of them final.
    assert len(boards) == 4520 and len(set(boards)) == 4520
    env, step = pgx.make("tic_tac_toe"), jax.jit(pgx.make("tic_tac_toe").step)
    rng = random.Random(0)
    index = {b: i for i, b in enumerate(boards)}
    obs, legal = t.planes(boards)
    seen = 0
    for game in range(20):
        s = env.init(jax.random.key(game))
        while not bool(s.terminated):
            board = tuple(int(x) for x in s._x.board)
            i = index[board]
            np.testing.assert_array_equal(obs[i], np.asarray(s.observation, np.float32))
            np.testing.assert_array_equal(legal[i], np.asarray(s.legal_action_mask))
            seen += 1
            s = step(s, rng.choice(np.flatnonzero(legal[i]).tolist()))
    assert seen > 100


def test_exact_outcome_matches_play_and_optimal_play_never_loses() -> None:
    t = _tool()
    boards = t.positions()
    first_empty = {b: b.index(t.EMPTY) for b in boards}
    r = t.analyse(first_empty)
    for seat in ("first", "second", "overall"):
        assert abs(sum(r[seat].values()) - 1.0) < 1e-9
    assert abs(sum(r["loss_by_cause"].values()) - r["overall"]["loss"]) < 1e-9
    # The same policy played against the random player, each seat half the games.
    rng, games, lost = random.Random(0), 20_000, 0
    for g in range(games):
        me, board = g % 2, tuple([t.EMPTY] * 9)
        while not t.is_final(board):
            board = (t.play(board, first_empty[board]) if t.mover(board) == me
                     else rng.choice(t.children(board)))
        lost += t.winner(board) == 1 - me
    sd = np.sqrt(r["overall"]["loss"] * (1 - r["overall"]["loss"]) / games)
    assert abs(lost / games - r["overall"]["loss"]) < 4 * sd
    assert r["faults"]["missed_block"] > 0 and r["loss_by_cause"]["missed_block"] > 0

    @cache
    def score(board: tuple[int, ...]) -> int:
        """Minimax value for the player to move."""
        if t.winner(board) >= 0:
            return -1  # the previous mover completed a line
        if t.EMPTY not in board:
            return 0
        return max(-score(nxt) for nxt in t.children(board))

    def best(board: tuple[int, ...]) -> int:
        return max((i for i in range(9) if board[i] == t.EMPTY),
                   key=lambda i: -score(t.play(board, i)))

    optimal = t.analyse({b: best(b) for b in boards})
    assert optimal["overall"]["loss"] == 0.0 and optimal["faults"]["missed_block"] == 0
