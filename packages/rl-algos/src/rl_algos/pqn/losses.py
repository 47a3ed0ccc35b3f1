"""PQN's targets and loss as pure functions (Gallici et al., 2024, Q(λ) as in their Eq. 5 and
the PQN reference implementation), time-major `[T, ...]`."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def q_lambda_returns(
    rewards: jax.Array,
    next_q_max: jax.Array,
    terminated: jax.Array,
    truncated: jax.Array,
    gamma: jax.Array | float,
    lam: jax.Array | float,
) -> jax.Array:
    """Q(λ) returns over a rollout, computed backwards:

        G_t = r_t + γ (1 − terminated_t) · B_t,
        B_t = max_a Q(s'_t, a)                                  if done_t or t = T − 1
            = λ G_{t+1} + (1 − λ) max_a Q(s'_t, a)              otherwise

    with s'_t the true next state (the final one when the episode ended) and the max over its
    legal actions. A terminated step does not bootstrap; a truncated one bootstraps from
    max Q(s'_t) and never from G_{t+1}, which belongs to the next episode."""
    done = jnp.logical_or(terminated, truncated)
    not_term = 1.0 - terminated.astype(jnp.float32)

    def step(g_next, x):
        r, q_max, nt, d = x
        boot = jnp.where(d, q_max, lam * g_next + (1.0 - lam) * q_max)
        g = r + gamma * nt * boot
        return g, g

    # At t = T − 1, g_next = max Q(s'_{T−1}) makes B = max Q(s'_{T−1}) for any λ.
    _, returns = jax.lax.scan(step, next_q_max[-1],
                              (rewards, next_q_max, not_term, done), reverse=True)
    return returns


def q_loss(q_taken: jax.Array, targets: jax.Array, hp: Any) -> tuple[jax.Array,
                                                                    dict[str, jax.Array]]:
    """0.5·E[(Q(s, a) − G)²] with the Q(λ) targets held fixed."""
    err = q_taken - jax.lax.stop_gradient(targets)
    loss = 0.5 * jnp.mean(err**2)
    return loss, {"loss/q": loss, "q/taken_mean": jnp.mean(q_taken)}
