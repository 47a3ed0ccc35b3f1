"""A pgx board game in self-play (`opponent="self"`): the learner plays every seat.

Each port `step` is one move by the player to move, and the observation is the next mover's view
(pgx's own planes for the current player), so one policy acting on every observation plays both
sides. The reward of a step is what the move gave its mover (+1 for a winning move; pgx's games
are zero-sum, so the loser's -1 is the negation of it), and `info["turn_sign"]` (float32 [])
is -1 when the next observation is the other player's (every move but a pass to oneself), +1
otherwise, and `info["player"]` (int32 []) is the player to move (0 or 1; pgx draws who opens
each game), for a learner that gives one seat to another policy. A learner that bootstraps
values or Q-values from the next observation negates them where `turn_sign` is -1 (negamax: the
opponent's value is minus one's own); the algorithms that do declare `self_play` (their
`AlgoSpec`), and the others refuse the environment. The other player's moves are the learner's
own, drawn from its current policy, or in part of the games a past snapshot's (PQN's
`pool_size`, `rl_algos.common.pool`).

A game's end is `terminated`; `max_moves=N` truncates after N moves (of both players). The
episode's return is the sum of the movers' rewards (1 when a game is decided, 0 for a draw), which
says nothing about strength: judge a self-play agent with `rl eval --opponent ...` or
`rl arena`. For the two-player board games without chance only (`SEARCHABLE`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_core import TimeStep
from rl_envs._registry import EnvError
from rl_envs.pgx_adapter import SEARCHABLE, PgxEnv, PgxState


class PgxSelfPlayEnv(PgxEnv):
    """See the module docstring."""

    self_play = True  # bootstrapped values are negated where info["turn_sign"] is -1

    def __init__(self, name: str, opponent: str = "self", max_moves: int | None = None):
        if name not in SEARCHABLE:
            raise EnvError(f"pgx/{name}: self-play (opponent='self') is for the two-player "
                           f"board games without chance ({', '.join(SEARCHABLE)}).")
        super().__init__(name, opponent="random", max_moves=max_moves)
        self.opponent = opponent

    def _timestep(self, state: PgxState, reward: Any, truncated: Any,
                  turn_sign: Any = 1.0) -> TimeStep:
        ts = super()._timestep(state, reward, truncated)
        return ts._replace(info={**ts.info,
                                 "turn_sign": jnp.asarray(turn_sign, jnp.float32).reshape(()),
                                 "player": jnp.asarray(state.game.current_player, jnp.int32)})

    def _observe(self, state: PgxState) -> jax.Array:
        return jnp.asarray(state.game.observation, jnp.float32)  # the mover's view

    def reset(self, key: jax.Array) -> tuple[PgxState, TimeStep]:
        game = self._env.init(key)
        state = PgxState(game, jnp.asarray(game.current_player, jnp.int32),
                         jnp.zeros((), jnp.bool_), jnp.zeros((), jnp.int32))
        return state, self._timestep(state, jnp.zeros(()), jnp.zeros((), jnp.bool_))

    def step(self, state: PgxState, action: jax.Array, key: jax.Array
             ) -> tuple[PgxState, TimeStep]:
        mover = state.game.current_player
        game = self._env.step(state.game, jnp.asarray(action, jnp.int32), key)
        reward = game.rewards[mover]
        nxt = PgxState(game, jnp.asarray(game.current_player, jnp.int32), state.greedy,
                       state.moves + 1)
        truncated = jnp.asarray(game.truncated, jnp.bool_)
        if self.max_moves is not None:
            truncated = truncated | (nxt.moves >= self.max_moves)
        sign = jnp.where(game.current_player == mover, 1.0, -1.0)
        return nxt, self._timestep(nxt, reward, truncated, sign)

    def __repr__(self) -> str:
        return f"PgxSelfPlayEnv({self.name!r})"
