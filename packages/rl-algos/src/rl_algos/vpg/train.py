"""VPG's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update = a rollout of `num_steps` on `num_envs` environments; GAE over it (bootstrapping on
truncation, not on termination); *one* Adam step of the policy on the whole batch; then
`num_value_epochs` × `num_value_minibatches` Adam steps of value regression. Actor and critic are
separate networks with separate optimisers (each optimiser sees zero gradients for the other's
parameters, so Adam leaves those exactly unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import optax

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.policy import actor_critic_setup, agent_fn, collect_gae_batch
from rl_algos.common.sgd import clipped_optimizer, sgd_epochs
from rl_algos.vpg.config import VPGConfig
from rl_algos.vpg.losses import policy_gradient_loss, value_regression_loss
from rl_core import Algorithm, RunnerState, TrainResult
from rl_core import make_train as _make_train


def make_algorithm(env: Any, config: VPGConfig) -> Algorithm:
    """VPG on `env` (one unbatched environment implementing the port)."""
    config.validate()
    setup = actor_critic_setup(env, config, config.num_envs)
    venv, dist, make_model, static, policy = setup
    n_mb, n_ep = config.num_value_minibatches, config.num_value_epochs

    def optimizers(hp: Any) -> tuple[optax.GradientTransformation, optax.GradientTransformation]:
        return (clipped_optimizer(hp.pi_lr, hp.max_grad_norm),
                clipped_optimizer(hp.vf_lr, hp.max_grad_norm))

    def init(key: jax.Array, hp: Any) -> RunnerState:
        pi_tx, vf_tx = optimizers(hp)
        return initial_carry(key, make_model, venv, lambda p: (pi_tx.init(p), vf_tx.init(p)))

    def pi_loss(params: Any, batch: Any, hp: Any):
        model = eqx.combine(params, static)
        out = jax.vmap(lambda x: model.policy_head(model.actor(x)))(batch["obs"])
        if model.log_std is not None:
            out = (out, model.log_std)
        p = dist.params(out, batch.get("action_mask"))
        return policy_gradient_loss(dist.log_prob(p, batch["action"]), batch["adv"],
                                    dist.entropy(p), hp,
                                    normalize_advantages=config.normalize_advantages)

    def vf_loss(params: Any, mb: Any):
        model = eqx.combine(params, static)
        return value_regression_loss(jax.vmap(model.value)(mb["obs"]), mb["target"])

    pi_grad = jax.value_and_grad(pi_loss, has_aux=True)
    vf_grad = jax.value_and_grad(vf_loss, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        (env_state, timestep, key), traj, batch = collect_gae_batch(
            setup, carry, hp, config.num_envs, config.num_steps)
        pi_tx, vf_tx = optimizers(hp)
        pi_state, vf_state = ts_.opt_state

        # One policy-gradient step on the whole batch.
        (_, metrics), grads = pi_grad(ts_.params, batch, hp)
        updates, pi_state = pi_tx.update(grads, pi_state, ts_.params)
        params = optax.apply_updates(ts_.params, updates)

        # Value regression: several epochs of steps on the same batch.
        key, k_perm = jax.random.split(key)
        params, vf_state, v_metrics = sgd_epochs(
            vf_grad, vf_tx, params, vf_state, {"obs": batch["obs"], "target": batch["target"]},
            k_perm, n_ep, n_mb)
        metrics = {**metrics, "loss/value": v_metrics["loss/value"]}
        return next_carry(carry, params, (pi_state, vf_state), (env_state, timestep, key),
                          carry.extras, traj, metrics)

    return Algorithm(init, update, config.num_updates, config.batch_size, agent_fn(venv),
                     policy)


def make_train(env: Any, config: VPGConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
