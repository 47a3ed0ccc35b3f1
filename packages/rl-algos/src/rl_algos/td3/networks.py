"""TD3's deterministic actor, squashed into [-1, 1] by tanh, on the shared batch-first
`DenseStack` (`common.dense`, whose docstring says why batch-first); the twin critics are the
shared `TwinCritic`."""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.dense import DenseStack


class Actor(eqx.Module):
    """`observations [B, D] -> actions [B, A]` in [-1, 1] (tanh); the caller rescales to the
    bounds."""

    net: DenseStack

    def __init__(self, key: jax.Array, d_obs: int, d_action: int, hidden: Sequence[int],
                 activation: str):
        self.net = DenseStack(key, d_obs, hidden, d_action, activation)

    def __call__(self, obs: jax.Array) -> jax.Array:
        return jnp.tanh(self.net(obs))
