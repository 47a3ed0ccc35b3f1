"""The learned drift of LPO (Lu et al., 2022, Section 4) and PPO's drift for comparison.

Mirror learning writes a policy objective as r·A − f(r, A), with a *drift* f ≥ 0 that vanishes
with zero gradient at r = 1. PPO's clipped objective is one such drift,
f_PPO(r, A) = ReLU((r − clip(r, 1 ± ε))·A). LPO learns f with a small MLP of the paper's features
(r − 1, (r − 1)², log r, (log r)², and each of them times A) and makes it a valid drift by
construction: `anchored` subtracts the network's value and r-slope at r = 1 and applies a ReLU,
so f_θ(1, A) = 0, ∂f_θ/∂r(1, A) = 0 and f_θ ≥ 0 for every θ (the paper's ReLU output, with the
value and gradient conditions made exact rather than approximate).

Temporally-aware LPO (TA-LPO; Jackson, Lu, Kirsch, Lange, Whiteson and Foerster, ICLR 2024,
"Discovering Temporally-Aware Reinforcement Learning Algorithms") gives the drift network the
training progress p = n/N (updates done over the run's updates) as one more input, so the evolved
trust region can change over a run (wide early, narrow late, or the reverse). A drift's kind is
its parameters' shape: `w1 [8, H]` is LPO's f_θ(r, A), `w1 [9, H]` TA-LPO's f_θ(r, A, p); both
train through `rl run --algo lpo --meta-params FILE`. p is constant in r, so the anchoring keeps
every f_θ(·, ·, p) a valid drift.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.common.meta import MetaMLP, anchored, init_meta_mlp, meta_mlp

DRIFT_FEATURES = 8
TA_DRIFT_FEATURES = DRIFT_FEATURES + 1


def drift_features(ratio: jax.Array, adv: jax.Array,
                   progress: jax.Array | float | None = None) -> jax.Array:
    """`ratio [...], adv [...] -> [..., 8]`: (r−1, (r−1)², log r, (log r)²) and each times A;
    with `progress` (a scalar p), `[..., 9]`: p appended."""
    d, lr = ratio - 1.0, jnp.log(ratio)
    base = jnp.stack([d, d * d, lr, lr * lr], axis=-1)
    parts = [base, base * adv[..., None]]
    if progress is not None:
        parts.append(jnp.broadcast_to(jnp.asarray(progress, ratio.dtype), ratio.shape)[..., None])
    return jnp.concatenate(parts, axis=-1)


def init_drift(key: jax.Array, hidden: int = 32, scale: float = 1.0) -> MetaMLP:
    """Drift-network parameters (the template an evolution strategy searches around)."""
    return init_meta_mlp(key, DRIFT_FEATURES, hidden, scale)


def init_ta_drift(key: jax.Array, hidden: int = 32, scale: float = 1.0) -> MetaMLP:
    """Temporally-aware drift-network parameters (`w1 [9, H]`: the progress is an input)."""
    return init_meta_mlp(key, TA_DRIFT_FEATURES, hidden, scale)


def is_temporal(params: MetaMLP) -> bool:
    """Whether `params` is a TA-LPO drift (reads the training progress); static (a shape)."""
    return params.w1.shape[-2] == TA_DRIFT_FEATURES


def learned_drift(params: MetaMLP, ratio: jax.Array, adv: jax.Array,
                  progress: jax.Array | float = 0.0) -> jax.Array:
    """f_θ(r, A) ≥ 0 per sample (`ratio`, `adv` of the same shape); a temporally-aware θ
    (`is_temporal`) also reads `progress` (scalar p = n/N), others ignore it."""
    p = progress if is_temporal(params) else None
    return anchored(lambda r: meta_mlp(params, drift_features(r, adv, p)), ratio,
                    jnp.ones_like(ratio))


def ppo_drift(ratio: jax.Array, adv: jax.Array, clip_eps: float | jax.Array) -> jax.Array:
    """PPO's drift: r·A − min(r·A, clip(r, 1 ± ε)·A) = ReLU((r − clip(r, 1 ± ε))·A)."""
    return jax.nn.relu((ratio - jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)) * adv)


def lpo_objective(ratio: jax.Array, adv: jax.Array, hp: Any,
                  progress: jax.Array | float = 0.0) -> jax.Array:
    """r·A − f_θ(r, A[, p]) per sample, to maximise, with θ = `hp.drift` (plugs into
    `ppo_loss(objective=...)`, which passes the training progress p)."""
    return ratio * adv - learned_drift(hp.drift, ratio, adv, progress)
