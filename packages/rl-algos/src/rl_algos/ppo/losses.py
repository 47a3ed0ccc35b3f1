"""PPO's loss (Schulman et al., 2017, "Proximal Policy Optimization Algorithms"), as a pure
function of a minibatch. The policy objective is pluggable so that DPO and LPO reuse the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

# `(value [B], old_value [B], target [B], hp) -> scalar` value loss.
ValueLossFn = Callable[[jax.Array, jax.Array, jax.Array, Any], jax.Array]
# `(ratio [B], advantage [B], hp, progress []) -> [B]` policy objective per sample, to maximise;
# `progress` is the training progress n/N in [0, 1) (updates done over the run's updates), which
# only a temporally-aware objective (TA-LPO) reads.
Objective = Callable[[jax.Array, jax.Array, Any, jax.Array], jax.Array]


def clipped_surrogate(ratio: jax.Array, adv: jax.Array, hp: Any,
                      progress: jax.Array | float = 0.0) -> jax.Array:
    """PPO-clip, per sample, as a quantity to *maximise*: min(r A, clip(r, 1±ε) A)."""
    del progress
    return jnp.minimum(ratio * adv, jnp.clip(ratio, 1.0 - hp.clip_eps, 1.0 + hp.clip_eps) * adv)


def value_loss(value: jax.Array, old_value: jax.Array, target: jax.Array, hp: Any,
               clip: bool) -> jax.Array:
    """0.5 (V − target)², optionally the pessimistic max with the clipped-update error
    (V_old + clip(V − V_old, ±ε) − target)², as in the PPO reference implementations."""
    err = (value - target) ** 2
    if clip:
        clipped = old_value + jnp.clip(value - old_value, -hp.clip_eps, hp.clip_eps)
        err = jnp.maximum(err, (clipped - target) ** 2)
    return 0.5 * jnp.mean(err)


def ppo_loss(
    log_prob: jax.Array,
    old_log_prob: jax.Array,
    advantages: jax.Array,
    entropy: jax.Array,
    value: jax.Array,
    old_value: jax.Array,
    targets: jax.Array,
    hp: Any,
    *,
    clip_value_loss: bool = True,
    normalize_advantages: bool = True,
    objective: Objective = clipped_surrogate,
    value_loss_fn: ValueLossFn | None = None,
    axis_name: str | None = None,
    weight: jax.Array | None = None,
    progress: jax.Array | float = 0.0,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """All inputs `[B]`. total = −E[objective(r, Â)] + vf_coef·L_V − ent_coef·E[H], with
    r = exp(log π − log π_old) and Â the advantages, standardised over the minibatch if asked.

    `objective` (per sample, to maximise) and `value_loss_fn` (`(V, V_old, target, hp) ->` scalar
    L_V; default: `value_loss` with `clip_value_loss`) are the two hooks through which PPO-family
    methods (DPO, LPO, learned value losses) reuse this loss; both receive the traced `hp`, so
    meta-parameters carried in it stay inputs of one compiled program. `objective` also gets
    `progress`, the training progress n/N (`[]`, 0 at the first update).

    With `axis_name` (data parallelism: this `[B]` is one device's equal share of the minibatch)
    the standardisation uses the whole minibatch's mean and standard deviation across the axis.

    `weight` (float `[B]`, 0 or 1; not with `axis_name`) keeps the policy's terms (the objective,
    the entropy, the advantages' standardisation and the ratio statistics) to the samples of
    weight 1: in self-play against a snapshot pool, the snapshot's moves are another policy's,
    so the learner's policy must not learn from them; the value loss keeps every sample (each
    position's return is real)."""
    if weight is not None:
        return _weighted_ppo_loss(log_prob, old_log_prob, advantages, entropy, value, old_value,
                                  targets, hp, weight, clip_value_loss=clip_value_loss,
                                  normalize_advantages=normalize_advantages,
                                  objective=objective, value_loss_fn=value_loss_fn,
                                  progress=progress)
    if normalize_advantages:
        if axis_name is None:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        else:
            mean = jax.lax.pmean(advantages.mean(), axis_name)
            var = jax.lax.pmean(jnp.mean((advantages - mean) ** 2), axis_name)
            advantages = (advantages - mean) / (jnp.sqrt(var) + 1e-8)
    return _combine(log_prob - old_log_prob, advantages, entropy, value, old_value, targets, hp,
                    jnp.mean, clip_value_loss, objective, value_loss_fn, progress)


def _weighted_ppo_loss(log_prob, old_log_prob, advantages, entropy, value, old_value, targets,
                       hp, weight, *, clip_value_loss, normalize_advantages, objective,
                       value_loss_fn, progress):
    """`ppo_loss` with the policy's terms averaged over the samples of weight 1."""
    count = jnp.maximum(weight.sum(), 1.0)

    def mean(x: jax.Array) -> jax.Array:
        return (weight * x).sum() / count

    if normalize_advantages:
        centred = advantages - mean(advantages)
        advantages = centred / (jnp.sqrt(mean(centred**2)) + 1e-8)
    return _combine(log_prob - old_log_prob, advantages, entropy, value, old_value, targets, hp,
                    mean, clip_value_loss, objective, value_loss_fn, progress)


def _combine(log_ratio, advantages, entropy, value, old_value, targets, hp, mean,
             clip_value_loss, objective, value_loss_fn, progress):
    """The total loss and its metrics, the policy's terms averaged with `mean`."""
    ratio = jnp.exp(log_ratio)
    pg_loss = -mean(objective(ratio, advantages, hp, progress))
    if value_loss_fn is None:
        v_loss = value_loss(value, old_value, targets, hp, clip_value_loss)
    else:
        v_loss = value_loss_fn(value, old_value, targets, hp)
    ent = mean(entropy)
    total = pg_loss + hp.vf_coef * v_loss - hp.ent_coef * ent
    metrics = {
        "loss/total": total,
        "loss/policy": pg_loss,
        "loss/value": v_loss,
        "loss/entropy": ent,
        # k3 estimator of KL(π_old || π) (Schulman's "Approximating KL divergence").
        "loss/approx_kl": mean((ratio - 1.0) - log_ratio),
        "loss/clip_fraction": mean((jnp.abs(ratio - 1.0) > hp.clip_eps).astype(jnp.float32)),
    }
    return total, metrics
