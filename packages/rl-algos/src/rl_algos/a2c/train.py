"""A2C's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update = a rollout of `num_steps` on `num_envs` environments; n-step returns over it (GAE with
λ = `gae_lambda`, 1 by default: the plain n-step return, bootstrapped from the critic at the
rollout's end and on truncation, never on termination); then exactly one RMSProp step on the
whole batch for actor and critic together (Mnih et al., 2016). No epochs, no minibatches, no
clipping of the objective: each rollout is used once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import optax

from rl_algos.a2c.config import A2CConfig
from rl_algos.a2c.losses import a2c_loss
from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.policy import actor_critic_setup, agent_fn, collect_gae_batch
from rl_core import Algorithm, RunnerState, TrainResult
from rl_core import make_train as _make_train


def rmsprop(lr: Any, max_grad_norm: Any) -> optax.GradientTransformation:
    """Global-norm clipping then RMSProp with decay 0.99 and ε 1e-5 added outside the square
    root (PyTorch's `RMSprop`, which Stable-Baselines3's A2C uses)."""
    return optax.flatten(optax.chain(optax.clip_by_global_norm(max_grad_norm),
                                     optax.rmsprop(lr, decay=0.99, eps=1e-5,
                                                   eps_in_sqrt=False)))


def make_algorithm(env: Any, config: A2CConfig) -> Algorithm:
    """A2C on `env` (one unbatched environment implementing the port)."""
    config.validate()
    setup = actor_critic_setup(env, config, config.num_envs)
    venv, dist, make_model, static, policy = setup

    def init(key: jax.Array, hp: Any) -> RunnerState:
        return initial_carry(key, make_model, venv, rmsprop(hp.lr, hp.max_grad_norm).init)

    def loss_fn(params: Any, batch: Any, hp: Any):
        out, value = jax.vmap(eqx.combine(params, static))(batch["obs"])
        p = dist.params(out, batch.get("action_mask"))
        return a2c_loss(dist.log_prob(p, batch["action"]), value, dist.entropy(p), batch["adv"],
                        batch["target"], hp, normalize_advantages=config.normalize_advantages)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        rolled, traj, batch = collect_gae_batch(setup, carry, hp, config.num_envs,
                                                config.num_steps)
        (_, metrics), grads = grad_fn(ts_.params, batch, hp)
        updates, opt_state = rmsprop(hp.lr, hp.max_grad_norm).update(grads, ts_.opt_state,
                                                                     ts_.params)
        params = optax.apply_updates(ts_.params, updates)
        return next_carry(carry, params, opt_state, rolled, carry.extras, traj, metrics)

    return Algorithm(init, update, config.num_updates, config.batch_size, agent_fn(venv),
                     policy)


def make_train(env: Any, config: A2CConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
