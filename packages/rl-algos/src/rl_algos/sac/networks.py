"""SAC's actor: `observations [B, D] -> (mean [B, A], log_std [B, A])` of the pre-squash Gaussian,
on the shared batch-first `DenseStack` (`common.dense`: the CPU's fast matmul path); the critics
are the shared `TwinCritic`."""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.dense import DenseStack
from rl_algos.sac.losses import bounded_log_std


class GaussianActor(eqx.Module):
    net: DenseStack
    d_action: int = eqx.field(static=True)

    def __init__(self, key: jax.Array, d_obs: int, d_action: int, hidden: Sequence[int],
                 activation: str):
        self.net = DenseStack(key, d_obs, hidden, 2 * d_action, activation)
        self.d_action = d_action

    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        out = self.net(obs)
        mean, raw = jnp.split(out, 2, axis=-1)
        return mean, bounded_log_std(raw)
