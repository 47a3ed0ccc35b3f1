"""DQN's targets and loss as pure functions over batches.

* n-step returns (the multi-step targets of Sutton, 1988, used by Rainbow, Hessel et al., 2018),
  cut at the first episode end in the window;
* the Double DQN target (van Hasselt, Guez and Silver, 2016, "Deep Reinforcement Learning with
  Double Q-learning", Eq. 4): the online network picks the next action, the target network
  values it; or DQN's own (Mnih et al., 2015, "Human-level control through deep reinforcement
  learning"): the max of the target network. Only legal actions are considered;
* the Huber loss (Mnih et al.'s error clipping to [-1, 1]) or the squared error.

Shapes: `B` transitions, `n` steps of a window, `A` actions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rl_algos.common.qvalues import masked_argmax


def n_step_return(rewards: jax.Array, terminated: jax.Array, truncated: jax.Array,
                  gamma: jax.Array | float) -> tuple[jax.Array, jax.Array, jax.Array]:
    """For windows of `n` consecutive steps of one environment (`rewards`, `terminated`,
    `truncated`: `[B, n]`), the first `m` steps are summed, `m` being `n` or the index of the
    first episode end plus one (a step that ends an episode is the window's last: what follows
    belongs to the next episode). Returns

        `ret [B] = sum_{k<m} gamma^k r_k`,
        `discount [B] = gamma^m (1 - terminated_{m-1})`,
        `last [B] = m - 1` (int32),

    so that the target is `ret + discount * V(s'_{last})` with `s'_{last}` the true next
    observation of step `last`: a terminated window does not bootstrap, a truncated one (a time
    limit) bootstraps from its final observation."""
    n = rewards.shape[-1]
    done = jnp.logical_or(terminated, truncated)
    # Step k is summed when no step before it ended the episode.
    ongoing = jnp.cumprod(1.0 - done[:, :-1].astype(jnp.float32), axis=-1)
    include = jnp.concatenate([jnp.ones((*done.shape[:-1], 1), jnp.float32), ongoing],
                              axis=-1)  # [B, n]
    powers = jnp.asarray(gamma, jnp.float32) ** jnp.arange(n, dtype=jnp.float32)
    ret = jnp.sum(include * powers * rewards, axis=-1)
    m = jnp.sum(include, axis=-1)
    last = (m - 1).astype(jnp.int32)
    term_last = jnp.take_along_axis(terminated, last[:, None], axis=-1)[:, 0]
    discount = jnp.asarray(gamma, jnp.float32) ** m * (1.0 - term_last.astype(jnp.float32))
    return ret, discount, last


def double_q_target(ret: jax.Array, discount: jax.Array, next_q_online: jax.Array,
                    next_q_target: jax.Array, next_mask: jax.Array | None,
                    double: bool = True) -> jax.Array:
    """`y = ret + discount * Q_target(s', a*)` with `a* = argmax_a Q_online(s', a)` over the legal
    actions `next_mask [B, A]` (all when None) for Double DQN, or `argmax_a Q_target(s', a)`
    (`double=False`: DQN's `max_a Q_target`). `ret`, `discount [B]` from `n_step_return`;
    `next_q_*` `[B, A]` at the bootstrap observation. No gradient flows into the target."""
    picker = next_q_online if double else next_q_target
    a_star = masked_argmax(picker, next_mask)
    value = jnp.take_along_axis(next_q_target, a_star[:, None], axis=-1)[:, 0]
    return jax.lax.stop_gradient(ret + discount * value)


def td_loss(q_taken: jax.Array, target: jax.Array, kind: str = "huber"
            ) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Mean over the batch of `huber(Q(s, a) - y)` with δ = 1 (quadratic `0.5 x^2` inside
    [-1, 1], linear outside: the gradient clipped as Mnih et al. clip the error) or
    `0.5 (Q(s, a) - y)^2` (`kind='mse'`). The target is held fixed."""
    err = q_taken - jax.lax.stop_gradient(target)
    if kind == "huber":
        abs_err = jnp.abs(err)
        quad = jnp.minimum(abs_err, 1.0)
        per = 0.5 * quad**2 + (abs_err - quad)
    else:
        per = 0.5 * err**2
    loss = jnp.mean(per)
    return loss, {"loss/q": loss, "q/taken_mean": jnp.mean(q_taken),
                  "q/target_mean": jnp.mean(target)}
