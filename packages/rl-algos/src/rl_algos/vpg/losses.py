"""VPG's two losses as pure functions of a batch (SpinningUp's VPG)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def policy_gradient_loss(
    log_prob: jax.Array, advantages: jax.Array, entropy: jax.Array, hp: Any, *,
    normalize_advantages: bool = True,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """All inputs `[B]`. loss = −E[log π(a|s) · Â] − ent_coef·E[H]; its gradient is the
    REINFORCE estimator with baseline. Â (a constant: no gradient flows into it) is standardised
    over the batch if asked."""
    advantages = jax.lax.stop_gradient(advantages)
    if normalize_advantages:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg = -jnp.mean(log_prob * advantages)
    ent = jnp.mean(entropy)
    total = pg - hp.ent_coef * ent
    return total, {"loss/policy": pg, "loss/entropy": ent}


def value_regression_loss(value: jax.Array, target: jax.Array) -> tuple[jax.Array,
                                                                       dict[str, jax.Array]]:
    """0.5·E[(V(s) − target)²], the target held fixed."""
    loss = 0.5 * jnp.mean((value - jax.lax.stop_gradient(target)) ** 2)
    return loss, {"loss/value": loss}
