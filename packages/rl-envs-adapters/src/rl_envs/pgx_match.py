"""Whole games of a pgx two-player board game between any two players, for `rl arena`.

The single-agent environment (`pgx_adapter.PgxEnv`) folds one fixed opponent into its step; a
match instead lets two players take turns on the same game: the built-in players of the adapter
(random, greedy, mcts:N) and trained agents alike. A player is a pure function

    act(state, observation, legal, key) -> action   (int32 [])

of one game's pgx state, the mover's observation planes (float32, as the agents saw them in
training), its legal moves (bool `[A]`) and a key; a trained agent acts on the observation and
the mask, the search player on the state.

In a match of `games` games the first-named player moves first in the even-numbered games and
second in the odd ones (pgx draws which player id moves first; the seats are assigned from it), so
exactly half the games are played from each side when `games` is even.

Two deterministic players (greedy agents, searches without noise) would replay the same two
games however many are asked for. `opening_moves = K` opens every game with K uniformly random
legal moves, as engine matches open from a book: games 2i and 2i+1 share their opening (the same
start and the same K moves) with the seats swapped, so each opening is played from both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rl_core import GameView
from rl_envs._registry import EnvError
from rl_envs.pgx_adapter import LOOKAHEAD, SEARCHABLE, greedy_move, search_simulations

Player = Callable[[Any, jax.Array, jax.Array, jax.Array], jax.Array]

# A game that has not ended after this many moves counts as unfinished (pgx's longest games end
# on their own move limits well before it).
MAX_MOVES = 4096


class MatchResult(NamedTuple):
    """Per game, from the first-named player's side."""

    score: jax.Array  # float32 [games]: +1 win, 0 draw, -1 loss
    moved_first: jax.Array  # bool [games]
    finished: jax.Array  # bool [games]


def _uniform(legal: jax.Array, key: jax.Array) -> jax.Array:
    return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)


def _searchable(name: str, what: str) -> Any:
    """pgx's game `name`, one of the two-player board games without chance; an EnvError saying
    `what` is for those otherwise."""
    import pgx

    if name not in SEARCHABLE:
        raise EnvError(f"pgx/{name}: {what} the two-player board games without chance "
                       f"({', '.join(SEARCHABLE)}).")
    return pgx.make(name)


class Arena:
    """The match engine of one pgx game (`name`, e.g. 'connect_four')."""

    def __init__(self, name: str):
        self.name = name
        self._env = _searchable(name, "matches are played on")

    def default_players(self) -> list[str]:
        """The built-in players an arena meets when none are named: random, and greedy where the
        game has it."""
        return ["random", "greedy"] if self.name in LOOKAHEAD else ["random"]

    def builtin(self, opponent: str) -> Player:
        """The built-in player named `opponent`: 'random', 'greedy' (where the game has it) or
        'mcts:N'; anything else is an EnvError naming the choices."""
        simulations = search_simulations(opponent, f"pgx/{self.name}")
        if simulations is not None:
            from rl_envs.pgx_search import mcts_move

            env = self._env
            return lambda s, obs, legal, key: mcts_move(env, s, key, simulations)
        if opponent == "random":
            return lambda s, obs, legal, key: _uniform(legal, key)
        if opponent == "greedy" and self.name in LOOKAHEAD:
            name = self.name
            return lambda s, obs, legal, key: greedy_move(name, obs, legal, key)
        choices = "random, greedy, mcts:N" if self.name in LOOKAHEAD else "random, mcts:N"
        raise EnvError(f"pgx/{self.name}: a built-in player is one of {choices}, got "
                       f"{opponent!r}.")

    def play(self, first: Player, second: Player, games: int, key: jax.Array,
             opening_moves: int = 0) -> MatchResult:
        """`games` whole games of `first` against `second` (not compiled: jit the caller), each
        opened by `opening_moves` random moves shared by its pair of games."""
        env = self._env

        def one(k: jax.Array, leads: jax.Array, k_pair: jax.Array
                ) -> tuple[jax.Array, jax.Array]:
            k_init, k_loop = jax.random.split(k)
            if opening_moves:
                k_init, k_open = jax.random.split(k_pair)
            s = env.init(k_init)
            seat = jnp.where(leads, s.current_player, 1 - s.current_player)

            def cond(c):
                s, _, _, i = c
                return ~(s.terminated | s.truncated) & (i < MAX_MOVES)

            def body(c):
                s, score, k, i = c
                k, k_a, k_b, k_step = jax.random.split(k, 4)
                obs = jnp.asarray(s.observation, jnp.float32)
                legal = s.legal_action_mask
                a = jnp.where(s.current_player == seat, first(s, obs, legal, k_a),
                              second(s, obs, legal, k_b))
                if opening_moves:
                    a = jnp.where(i < opening_moves,
                                  _uniform(legal, jax.random.fold_in(k_open, i)), a)
                s = env.step(s, a.astype(jnp.int32), k_step)
                return s, score + s.rewards[seat], k, i + 1

            s, score, _, _ = jax.lax.while_loop(
                cond, body, (s, jnp.zeros((), jnp.float32), k_loop, jnp.zeros((), jnp.int32)))
            return score, s.terminated | s.truncated

        leads = jnp.arange(games) % 2 == 0
        keys = jax.random.split(key, games)
        # The pair's key (read only for an opening): a fold of the run's key that no game's
        # own key uses.
        pairs = keys if not opening_moves else jax.vmap(
            lambda i: jax.random.fold_in(jax.random.fold_in(key, games), i))(
            jnp.arange(games) // 2)
        score, finished = jax.vmap(one)(keys, leads, pairs)
        return MatchResult(score, leads, finished)


# The games whose rules are unchanged by the board's left-right reflection, and how their
# moves index it: "columns" (a move is a column: connect_four) or "cells" (a move is a cell,
# row-major, any further moves such as a pass after them: tic_tac_toe, go). Othello's opening
# square and hex's rhombus are symmetric under other reflections only, and the chess family's
# rules (castling, the pieces' files) under none.
REFLECTIONS = {"connect_four": "columns", "tic_tac_toe": "cells", "go_9x9": "cells",
               "go_19x19": "cells"}


def _reflection(name: str, observation_shape: tuple[int, ...]
                ) -> Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]] | None:
    """`reflect(observation [H, W, C], per_action [A]) -> both mirrored` for the games of
    `REFLECTIONS` (`rl_core.TurnBasedGame.reflect`), None for the others."""
    moves = REFLECTIONS.get(name)
    if moves is None:
        return None
    h, w = observation_shape[:2]

    def reflect(observation: jax.Array, per_action: jax.Array) -> tuple[jax.Array, jax.Array]:
        if moves == "columns":
            mirrored = per_action[::-1]
        else:
            cells = per_action[:h * w].reshape(h, w)[:, ::-1].reshape(h * w)
            mirrored = jnp.concatenate([cells, per_action[h * w:]])
        return observation[:, ::-1], mirrored

    return reflect


class PgxGame:
    """A pgx board game as the turn-based port (`rl_core.TurnBasedGame`), for planners: the
    game's own `init` and `step`, and the mover's observation planes as float32 (the planes the
    single-agent environment shows its agent). For the games of `SEARCHABLE` only: two players,
    perfect information, no chance, so a move's result is the model's prediction."""

    def __init__(self, name: str):
        self.name = name
        self._env = _searchable(name, "a game model exists for")
        probe = jax.eval_shape(self._env.init, jax.random.PRNGKey(0))
        self.num_players = int(self._env.num_players)
        self.num_actions = int(probe.legal_action_mask.shape[0])
        self.observation_shape = tuple(probe.observation.shape)
        self.reflect = _reflection(name, self.observation_shape)

    def init(self, key: jax.Array) -> Any:
        return self._env.init(key)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> Any:
        return self._env.step(state, jnp.asarray(action, jnp.int32), key)

    def view(self, state: Any) -> GameView:
        return GameView(
            observation=jnp.asarray(state.observation, jnp.float32),
            legal=jnp.asarray(state.legal_action_mask, jnp.bool_),
            mover=jnp.asarray(state.current_player, jnp.int32),
            rewards=jnp.asarray(state.rewards, jnp.float32),
            over=jnp.asarray(state.terminated | state.truncated, jnp.bool_))
