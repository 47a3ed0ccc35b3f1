"""Returns and advantages, written once for every algorithm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def gae(
    rewards: jax.Array,
    values: jax.Array,
    next_values: jax.Array,
    terminated: jax.Array,
    truncated: jax.Array,
    gamma: jax.Array | float,
    lam: jax.Array | float,
    turn_sign: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Generalised Advantage Estimation (Schulman et al., 2016), time-major `[T, ...]`.

    values[t] = V(s_t); next_values[t] = V(s'_t), the value of the *true* next observation (the
    final one when the episode ended). Termination and truncation are kept apart:
        δ_t = r_t + γ (1 − terminated_t) V(s'_t) − V(s_t)     # a truncated step still bootstraps
        A_t = δ_t + γ λ (1 − done_t) A_{t+1},   done_t = terminated_t ∨ truncated_t
    (an ended episode, either way, does not pass advantage back from the next one).
    Returns `(advantages, targets)`, targets = advantages + values, both `[T, ...]`.

    In self-play (`turn_sign [T, ...]`, -1 where s'_t is the other player's position, as a
    self-play environment's `info["turn_sign"]` says) values are the mover's and the next one's
    counts negated (negamax): γ becomes γ·turn_sign_t in both lines.
    """
    if turn_sign is not None:
        gamma = gamma * turn_sign
    not_term = 1.0 - terminated.astype(jnp.float32)
    not_done = 1.0 - jnp.logical_or(terminated, truncated).astype(jnp.float32)
    deltas = rewards + gamma * not_term * next_values - values

    if turn_sign is not None:  # a discount per step
        def signed(carry, x):
            delta, nd, g = x
            adv = delta + g * lam * nd * carry
            return adv, adv

        _, adv = jax.lax.scan(signed, jnp.zeros_like(deltas[0]), (deltas, not_done, gamma),
                              reverse=True)
        return adv, adv + values

    def step(carry, x):
        delta, nd = x
        adv = delta + gamma * lam * nd * carry
        return adv, adv

    _, adv = jax.lax.scan(step, jnp.zeros_like(deltas[0]), (deltas, not_done), reverse=True)
    return adv, adv + values


def gae_batch(traj: Any, value_fn: Callable[[jax.Array], jax.Array], hp: Any,
              batch_size: int) -> dict[str, jax.Array]:
    """A rollout `traj` (a `Transition`, leaves `[T, N, ...]`, its `extras` holding the acting
    policy's `value`) as one flat batch for the actor-critic losses (A2C, VPG): the observations,
    actions and extras with GAE advantages `adv` and value targets `target` (`gae` with `hp.gamma`,
    `hp.gae_lambda`; the next values from `value_fn(obs) -> []` at the true next observations),
    every leaf reshaped to `[batch_size = T * N, ...]`."""
    next_values = jax.vmap(jax.vmap(value_fn))(traj.next_observation)
    adv, targets = gae(traj.reward, traj.extras["value"], next_values, traj.terminated,
                       traj.truncated, hp.gamma, hp.gae_lambda)
    batch = {"obs": traj.observation, "action": traj.action, "adv": adv, "target": targets,
             **traj.extras}
    return jax.tree.map(lambda x: x.reshape(batch_size, *x.shape[2:]), batch)

