"""The turn-based game port: a two-player (or n-player) game with perfect information, played
move by move, for algorithms that plan with the game's rules as their model (AlphaZero's search).

The single-agent port (`rl_core.env`) hides the other players inside `step`; a planner needs the
game itself: who is to move, what they may play, and what each move does. A `TurnBasedGame` is
pure functions of one game (vmap them for many):

    init(key)                 -> state     a new game
    step(state, action, key)  -> state     the player to move plays `action` (int32 [])
    view(state)               -> GameView  what the mover sees and what the last move did

A game whose board is symmetric under a left-right reflection may also give
`reflect(observation, per_action) -> (observation, per_action)`: the mirror image of a
position (one, unbatched) and of an array over its moves (`[num_actions]`: a policy, a legal
mask), the same position as the game would show after the mirrored moves. Learners use it to
train on both images of each position (AlphaGo Zero's augmentation by the board's symmetries);
a game without one has `reflect = None`.

Rewards are indexed by player id (not by "the player to move"), so whoever computes a return
decides whose it is. A game that is `over` stays over: its state is only ever replaced by a new
game. The adapters give one through an environment's `game_model()` (`rl_envs.pgx_adapter`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax


class GameView(NamedTuple):
    """One game seen from the player to move; batched views carry a leading `[B]` axis.

    observation: float32 `[*observation_shape]`, the mover's view of the position;
    legal:       bool `[num_actions]`, the mover's legal moves (meaningless once `over`);
    mover:       int32 `[]`, the id of the player to move;
    rewards:     float32 `[num_players]`, what the move that led here gave each player;
    over:        bool `[]`, the game has ended (by its own rules: a win, a draw, a move limit).
    """

    observation: jax.Array
    legal: jax.Array
    mover: jax.Array
    rewards: jax.Array
    over: jax.Array


class TurnBasedGame(Protocol):
    """A game as a model: see the module docstring."""

    num_players: int
    num_actions: int
    observation_shape: tuple[int, ...]

    def init(self, key: jax.Array) -> Any: ...

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> Any: ...

    def view(self, state: Any) -> GameView: ...

    # The left-right mirror image of (observation, per-move array), or None: see above.
    reflect: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]] | None
