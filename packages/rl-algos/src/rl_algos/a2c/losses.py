"""A2C's loss as a pure function of a batch (Mnih et al., 2016, Algorithm S3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def a2c_loss(log_prob: jax.Array, value: jax.Array, entropy: jax.Array, advantages: jax.Array,
             returns: jax.Array, hp: Any, *, normalize_advantages: bool = False
             ) -> tuple[jax.Array, dict[str, jax.Array]]:
    """All inputs `[B]`. loss = −E[log π(a|s) · Â] + vf_coef · E[(R − V(s))²] − ent_coef · E[H]
    with Â and the n-step return R held fixed (no gradient flows into them); Â is standardised
    over the batch if asked. The value term is the squared error itself, as Stable-Baselines3's
    (not halved)."""
    advantages = jax.lax.stop_gradient(advantages)
    if normalize_advantages:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg = -jnp.mean(log_prob * advantages)
    vf = jnp.mean((jax.lax.stop_gradient(returns) - value) ** 2)
    ent = jnp.mean(entropy)
    total = pg + hp.vf_coef * vf - hp.ent_coef * ent
    return total, {"loss/policy": pg, "loss/value": vf, "loss/entropy": ent}
