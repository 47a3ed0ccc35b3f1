"""A search player for pgx's perfect-information board games: Monte Carlo tree search with mctx
(Danihelka et al., 2022, the MuZero search of Schrittwieser et al., 2020) and the game itself as the
model, a uniform prior over the legal moves, and random playouts as the value of a new position
(classical MCTS with random rollouts, Kocsis and Szepesvári, 2006; Coulom, 2006).

It needs no network and no training, so it is a fixed yardstick whose strength grows with its
simulation count: the adapter's `opponent="mcts:N"`, a training opponent and an opponent to be
judged against (`rl eval --opponent mcts:N`).

Values are from the view of the player to move; a move to a position where the same player moves
again keeps the sign (discount +1), one that hands the move over flips it (discount -1), and the
end of a game stops the backup (discount 0). Q-values are normalised to [0, 1] from the games'
reward range [-1, 1]. At the root the player takes the most visited move (ties broken at random):
no exploration noise, no sampling.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

# A random playout stops after this many moves (pgx's longest games, go_19x19 and shogi, end on
# their own move limits first); a playout that reaches it scores 0.
_MAX_PLAYOUT_MOVES = 1024


def _uniform_logits(legal: jax.Array) -> jax.Array:
    """Equal logits over the legal moves `[..., A]`, the lowest float elsewhere."""
    return jnp.where(legal, 0.0, jnp.finfo(jnp.float32).min)


def random_playout(env: Any, state: Any, key: jax.Array) -> jax.Array:
    """float32 []: the outcome, for the player to move in `state`, of a game finished with
    uniformly random legal moves (0 for a game already over)."""
    me = state.current_player

    def cond(c):
        s, _, _, i = c
        return ~(s.terminated | s.truncated) & (i < _MAX_PLAYOUT_MOVES)

    def body(c):
        s, total, k, i = c
        k, k_move, k_step = jax.random.split(k, 3)
        action = jax.random.categorical(k_move, _uniform_logits(s.legal_action_mask))
        s = env.step(s, action.astype(jnp.int32), k_step)
        return s, total + s.rewards[me], k, i + 1

    _, total, _, _ = jax.lax.while_loop(
        cond, body, (state, jnp.zeros((), jnp.float32), key, jnp.zeros((), jnp.int32)))
    return total


def _recurrent(env: Any, params: Any, key: jax.Array, action: jax.Array,
               states: Any) -> tuple[Any, Any]:
    """mctx's model step over a batch `[B]` of pgx states: play `action [B]`, score the new
    positions by random playouts."""
    import mctx

    del params
    b = action.shape[0]
    k_step, k_play = jax.random.split(key)
    mover = states.current_player
    nxt = jax.vmap(env.step)(states, action.astype(jnp.int32), jax.random.split(k_step, b))
    reward = jnp.take_along_axis(nxt.rewards, mover[:, None], axis=1)[:, 0]
    over = nxt.terminated | nxt.truncated
    same = nxt.current_player == mover
    discount = jnp.where(over, 0.0, jnp.where(same, 1.0, -1.0))
    value = jax.vmap(functools.partial(random_playout, env))(nxt, jax.random.split(k_play, b))
    out = mctx.RecurrentFnOutput(
        reward=reward.astype(jnp.float32), discount=discount.astype(jnp.float32),
        prior_logits=_uniform_logits(nxt.legal_action_mask),
        value=jnp.where(over, 0.0, value).astype(jnp.float32))
    return out, nxt


def mcts_move(env: Any, state: Any, key: jax.Array, num_simulations: int) -> jax.Array:
    """int32 []: the search player's move in the pgx `state` (unbatched; vmap it for many
    games), after `num_simulations` simulations from it."""
    import mctx

    k_root, k_search = jax.random.split(key)
    root_state = jax.tree.map(lambda x: x[None], state)  # mctx searches a batch: [1, ...]
    root = mctx.RootFnOutput(
        prior_logits=_uniform_logits(state.legal_action_mask)[None],
        value=random_playout(env, state, k_root)[None],
        embedding=root_state)
    out = mctx.muzero_policy(
        params=None, rng_key=k_search, root=root,
        recurrent_fn=functools.partial(_recurrent, env), num_simulations=num_simulations,
        invalid_actions=~state.legal_action_mask[None],
        qtransform=functools.partial(mctx.qtransform_by_min_max, min_value=-1.0, max_value=1.0),
        dirichlet_fraction=0.0, temperature=0.0)
    return out.action[0].astype(jnp.int32)
