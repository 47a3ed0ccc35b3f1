"""DPO's policy objective (Lu et al., 2022, Eq. for the discovered drift, α = 2, β = 0.6):

    f(r, A) = ReLU((r − 1)·A − α·tanh((r − 1)·A / α))      if A ≥ 0
            = ReLU(log(r)·A − β·tanh(log(r)·A / β))          if A < 0

and the per-sample quantity to *maximise* is r·A − f(r, A) (the drift is a penalty subtracted
from the importance-weighted advantage, as in the paper's mirror-learning form and its
reference implementation). At r = 1 both the drift and its gradient vanish."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def dpo_drift(ratio: jax.Array, adv: jax.Array, hp: Any) -> jax.Array:
    """The discovered drift f(r, A) ≥ 0, per sample."""
    pos = (ratio - 1.0) * adv
    neg = jnp.log(ratio) * adv
    drift_pos = jax.nn.relu(pos - hp.alpha * jnp.tanh(pos / hp.alpha))
    drift_neg = jax.nn.relu(neg - hp.beta * jnp.tanh(neg / hp.beta))
    return jnp.where(adv >= 0.0, drift_pos, drift_neg)


def dpo_objective(ratio: jax.Array, adv: jax.Array, hp: Any,
                  progress: jax.Array | float = 0.0) -> jax.Array:
    """r·A − f(r, A), per sample, to maximise (plugs into `ppo_loss(objective=...)`)."""
    del progress
    return ratio * adv - dpo_drift(ratio, adv, hp)
