"""AlphaZero's replay: the positions it learns from and their targets.

A position's value target is its game's outcome for its mover (`outcome_targets`), mixed with
the search's value of it (`mixed_value_targets`); its policy target is the search's improved
policy. With `reflect`, a minibatch's positions are drawn as played or as their mirror images
(`mirrored`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Replay(NamedTuple):
    """The last `replay_updates` updates' positions, `[C, ...]` (C = `replay_size`)."""

    observation: jax.Array  # float32 [C, *obs_shape]
    legal: jax.Array  # bool [C, A]
    policy: jax.Array  # float32 [C, A], the search's improved policy
    value: jax.Array  # float32 [C], the mover's value target (`mixed_value_targets`)
    valid: jax.Array  # bool [C], the position has its target (its game ended in its update or
    #                   the next)


def outcome_targets(rewards: jax.Array, over: jax.Array, mover: jax.Array
                    ) -> tuple[jax.Array, jax.Array]:
    """Value targets of `T` consecutive moves of `B` games (a finished game followed by a new
    one): `rewards [T, B, P]` what move t gave each player, `over [T, B]` move t ended its game,
    `mover [T, B]` who made move t. Returns `(value [T, B], valid [T, B])`: the sum of the rewards
    the mover of t receives from move t to its game's end, and whether that end is within the T
    moves."""

    def back(carry, x):
        total, ended = carry
        r, o = x
        total = r + jnp.where(o[:, None], 0.0, total)
        ended = o | ended
        return (total, ended), (total, ended)

    init = (jnp.zeros_like(rewards[0]), jnp.zeros_like(over[0]))
    _, (total, valid) = jax.lax.scan(back, init, (rewards, over), reverse=True)
    value = jnp.take_along_axis(total, mover[..., None], axis=-1)[..., 0]
    return value, valid


def mixed_value_targets(outcome: jax.Array, searched: jax.Array, mix: jax.Array) -> jax.Array:
    """`(1 - mix) * outcome + mix * searched` (any matching shapes): the game's result, which is
    unbiased but carries the noise of every later move, mixed with the search's value of the
    position, which is smoother but biased by the network (the average of the two targets of
    Prasad's "Lessons from implementing AlphaZero" for connect four at `mix = 0.5`)."""
    return (1.0 - mix) * outcome + mix * searched


def mirrored(reflect: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]],
             mb: Replay, flip: jax.Array) -> Replay:
    """The positions `mb [M, ...]` with those where `flip [M]` replaced by their mirror images
    under the game's `reflect`: the board, its legal moves and its policy target (a value is its
    mirror image's too)."""
    obs, legal = jax.vmap(reflect)(mb.observation, mb.legal)
    _, target = jax.vmap(reflect)(mb.observation, mb.policy)

    def pick(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(flip.reshape((-1,) + (1,) * (a.ndim - 1)), b, a)

    return mb._replace(observation=pick(mb.observation, obs), legal=pick(mb.legal, legal),
                       policy=pick(mb.policy, target))
