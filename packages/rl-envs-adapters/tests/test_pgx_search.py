"""The search opponent (`opponent="mcts:N"`, rl_envs.pgx_search): it takes a win and blocks a
loss one move away, and it beats a random player."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset, EpisodeStatistics, VectorEnv

pgx = pytest.importorskip("pgx")
pytest.importorskip("mctx")

from rl_envs.pgx_search import mcts_move  # noqa: E402


def _position(moves: list[int]):
    """The tic_tac_toe state after `moves` (cells 0-8, row-major), the first player's first."""
    env = pgx.make("tic_tac_toe")
    state = env.init(jax.random.PRNGKey(0))
    for m in moves:
        state = env.step(state, jnp.int32(m))
    return env, state


@pytest.mark.parametrize("moves, best", [
    ([0, 3, 1, 4], 2),  # the mover completes the top row (and the other threatens 5)
    ([0, 3, 8, 4], 5),  # no win for the mover: the other's middle row must be blocked
])
def test_search_wins_and_blocks_one_move_ahead(moves: list[int], best: int) -> None:
    env, state = _position(moves)
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    chosen = jax.jit(jax.vmap(lambda k: mcts_move(env, state, k, 64)))(keys)
    assert np.all(np.asarray(chosen) == best), chosen


@pytest.mark.heavy
def test_search_opponent_beats_random_play() -> None:
    """A uniformly random agent against mcts:32 over 128 games of tic_tac_toe (the agent's seat
    drawn per game): it loses most of them; two random players would score 0 on average. (The
    port's contract is the adapter's, checked with the random opponent in test_pgx_adapter.)"""
    env = rl_envs.make("pgx/tic_tac_toe", opponent="mcts:32")
    assert env.simulations == 32 and env.greedy_prob == 0.0
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), 128)

    def play(carry, key):
        state, ts, done, total = carry
        k_act, k_step = jax.random.split(key)
        logits = jnp.where(ts.info["action_mask"], 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits)
        state, ts = venv.step(state, action, k_step)
        ended = (ts.terminated | ts.truncated) & ~done
        return (state, ts, done | ended, total + jnp.where(done, 0.0, ts.reward)), None

    @jax.jit
    def games(key):
        state, ts = venv.reset(key)
        zeros = jnp.zeros(128)
        carry = (state, ts, zeros.astype(bool), zeros)
        (_, _, done, total), _ = jax.lax.scan(play, carry, jax.random.split(key, 5))
        return done, total

    done, total = games(jax.random.PRNGKey(2))
    assert np.all(np.asarray(done))  # a tic_tac_toe game lasts at most 5 agent moves
    assert float(np.mean(total)) < -0.5, np.mean(total)
