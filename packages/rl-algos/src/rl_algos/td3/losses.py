"""TD3's targets and losses as pure functions over batches (Fujimoto et al., 2018, Algorithm 1).

Shapes: `B` transitions, `A` action dimensions, `K` critics (2). Actions are in [-1, 1].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def smoothed_target_action(target_action: jax.Array, std_normal: jax.Array, noise: jax.Array,
                           noise_clip: jax.Array) -> jax.Array:
    """Target-policy smoothing: `clip(mu'(s') + clip(noise * z, -noise_clip, noise_clip), -1, 1)`
    for `target_action [B, A]` and a standard normal draw `z` (`std_normal`, same shape), so the
    target is an average over nearby actions and the critic cannot exploit a narrow peak of its
    own error. `z` is drawn by the caller: one draw serves every critic step of an update."""
    eps = jnp.clip(noise * std_normal.astype(target_action.dtype), -noise_clip, noise_clip)
    return jnp.clip(target_action + eps, -1.0, 1.0)


def clipped_double_q_target(reward: jax.Array, terminated: jax.Array, next_q: jax.Array,
                            gamma: jax.Array) -> jax.Array:
    """`y = r + gamma * (1 - terminated) * min_k Q'_k(s', a~)` for `reward [B]`, `terminated [B]`
    and `next_q [B, K]`. Only termination stops the bootstrap: a transition cut by a time limit
    (truncated) has its true final observation as `s'` and bootstraps from it."""
    not_done = 1.0 - terminated.astype(jnp.float32)
    return reward + gamma * not_done * jnp.min(next_q, axis=-1)


def actor_loss(q1: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Deterministic policy gradient through the first critic: `-mean_b Q_1(s_b, mu(s_b))` for
    `q1 [B]`, differentiated with respect to the actor only."""
    loss = -jnp.mean(q1)
    return loss, {"actor_loss": loss}
