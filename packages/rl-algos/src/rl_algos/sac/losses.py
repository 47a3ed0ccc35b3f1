"""SAC's squashed Gaussian policy, targets and losses as pure functions over batches (Haarnoja et
al., 2018, Eqs. 5-7 and Appendix C; the temperature loss of Haarnoja et al., 2018b, Eq. 18).

Shapes: `B` transitions, `A` action dimensions, `K` critics (2). Actions are in [-1, 1].
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


def bounded_log_std(raw: jax.Array) -> jax.Array:
    """The network's raw output mapped smoothly into [LOG_STD_MIN, LOG_STD_MAX]."""
    return LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (jnp.tanh(raw) + 1.0)


def squashed_log_prob(u: jax.Array, mean: jax.Array, log_std: jax.Array) -> jax.Array:
    """log pi(tanh(u)) for the pre-squash sample `u [B, A]` of N(mean, exp(log_std)^2): the
    Gaussian's log-density minus the log-determinant of tanh's Jacobian, sum_i log(1 -
    tanh(u_i)^2), written as 2 (log 2 - u - softplus(-2u)) (exact and finite for large |u|).
    Returns `[B]`."""
    z = (u - mean) * jnp.exp(-log_std)
    gaussian = jnp.sum(-0.5 * z**2 - log_std - 0.5 * np.log(2.0 * np.pi), axis=-1)
    log_det = jnp.sum(2.0 * (np.log(2.0) - u - jax.nn.softplus(-2.0 * u)), axis=-1)
    return gaussian - log_det


def sample_squashed(mean: jax.Array, log_std: jax.Array,
                    std_normal: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Reparameterised sample `(tanh(mean + std * z) [B, A], log pi [B])`."""
    u = mean + jnp.exp(log_std) * std_normal
    return jnp.tanh(u), squashed_log_prob(u, mean, log_std)


def soft_q_target(reward: jax.Array, terminated: jax.Array, next_q: jax.Array,
                  next_log_prob: jax.Array, alpha: jax.Array, gamma: jax.Array) -> jax.Array:
    """`y = r + gamma (1 - terminated) (min_k Q'_k(s', a') - alpha log pi(a'|s'))`, `a' ~ pi(s')`.
    Only termination stops the bootstrap: a time-limit end bootstraps from its final state."""
    not_done = 1.0 - terminated.astype(jnp.float32)
    soft_value = jnp.min(next_q, axis=-1) - alpha * next_log_prob
    return reward + gamma * not_done * soft_value


def sac_actor_loss(q: jax.Array, log_prob: jax.Array,
                   alpha: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    """`E[alpha log pi(a|s) - min_k Q_k(s, a)]` with `a` the reparameterised sample (`q [B, K]`);
    the temperature is held fixed here."""
    loss = jnp.mean(jax.lax.stop_gradient(alpha) * log_prob - jnp.min(q, axis=-1))
    return loss, {"actor_loss": loss, "entropy": -jnp.mean(log_prob)}


def temperature_loss(log_alpha: jax.Array, log_prob: jax.Array,
                     target_entropy: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    """`-E[log alpha (log pi(a|s) + target_entropy)]`: alpha grows while the policy's entropy is
    below the target and shrinks while above (gradient only into log alpha)."""
    loss = -jnp.mean(log_alpha * jax.lax.stop_gradient(log_prob + target_entropy))
    return loss, {"alpha_loss": loss, "alpha": jnp.exp(log_alpha)}
