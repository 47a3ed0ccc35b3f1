"""The learned drift of LPO (Lu et al., 2022, Section 4) and PPO's drift for comparison.

Mirror learning writes a policy objective as r·A − f(r, A), with a *drift* f ≥ 0 that vanishes
with zero gradient at r = 1. PPO's clipped objective is one such drift,
f_PPO(r, A) = ReLU((r − clip(r, 1 ± ε))·A). LPO learns f with a small MLP of the paper's features
(r − 1, (r − 1)², log r, (log r)², and each of them times A) and makes it a valid drift by
construction: `anchored` subtracts the network's value and r-slope at r = 1 and applies a ReLU,
so f_θ(1, A) = 0, ∂f_θ/∂r(1, A) = 0 and f_θ ≥ 0 for every θ (the paper's ReLU output, with the
value and gradient conditions made exact rather than approximate).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.common.meta import MetaMLP, anchored, init_meta_mlp, meta_mlp

DRIFT_FEATURES = 8


def drift_features(ratio: jax.Array, adv: jax.Array) -> jax.Array:
    """`ratio [...], adv [...] -> [..., 8]`: (r−1, (r−1)², log r, (log r)²) and each times A."""
    d, lr = ratio - 1.0, jnp.log(ratio)
    base = jnp.stack([d, d * d, lr, lr * lr], axis=-1)
    return jnp.concatenate([base, base * adv[..., None]], axis=-1)


def init_drift(key: jax.Array, hidden: int = 32, scale: float = 1.0) -> MetaMLP:
    """Drift-network parameters (the template an evolution strategy searches around)."""
    return init_meta_mlp(key, DRIFT_FEATURES, hidden, scale)


def learned_drift(params: MetaMLP, ratio: jax.Array, adv: jax.Array) -> jax.Array:
    """f_θ(r, A) ≥ 0 per sample (`ratio`, `adv` of the same shape)."""
    return anchored(lambda r: meta_mlp(params, drift_features(r, adv)), ratio,
                    jnp.ones_like(ratio))


def ppo_drift(ratio: jax.Array, adv: jax.Array, clip_eps: float | jax.Array) -> jax.Array:
    """PPO's drift: r·A − min(r·A, clip(r, 1 ± ε)·A) = ReLU((r − clip(r, 1 ± ε))·A)."""
    return jax.nn.relu((ratio - jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)) * adv)


def lpo_objective(ratio: jax.Array, adv: jax.Array, hp: Any) -> jax.Array:
    """r·A − f_θ(r, A) per sample, to maximise, with θ = `hp.drift` (plugs into
    `ppo_loss(objective=...)`)."""
    return ratio * adv - learned_drift(hp.drift, ratio, adv)
