"""PPO's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update)
that rl-core's loops turn into `train(key, hparams)` or a chunked multi-member run.

With `data_axis` (see `rl_core.parallel.data_parallel`) the algorithm is one device's share of a
data-parallel agent: it steps `num_envs / D` environments, averages its gradients (and the
advantage statistics and loss metrics) over the axis, and sums episode counts over it. Without it
the program is exactly the single-device one.

One update = a rollout of `num_steps` on `num_envs` environments, GAE over it (bootstrapping on
truncation, not on termination), then `num_epochs` passes of `num_minibatches` Adam steps on the
clipped objective with global-norm gradient clipping and an optionally annealed learning rate.

In self-play with `pool_size > 0` (`rl_algos.common.pool`) a past snapshot plays player 1 in the
first `pool_games` environments; the carry's `extras` is the pool. The snapshot's moves are
another policy's, so they are left out of the policy's terms of the loss (`ppo_loss`'s
`weight`); they stay in the rollout, where GAE runs through them as through any opponent's
move, and in the value loss.

`config.fast_update` computes the same update in a faster arrangement (see `PPOConfig`): the
rollout acts with the actor alone and precomputed resets, the critic values the whole rollout in
one pass after it, the SGD runs the networks feature-major. The random streams are the
default's, so the two differ only in float rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.config import require
from rl_algos.common.distributions import log_prob_entropy_feature_major
from rl_algos.common.networks import (
    actor_critic_feature_major,
    actor_weights_t,
    policy_batch_major,
    value_batch_major,
)
from rl_algos.common.policy import (
    act_from_output,
    actor_critic_setup,
    agent_fn,
    prepare_observation,
)
from rl_algos.common.pool import init_pool, pool_acting, pool_epilogue
from rl_algos.common.returns import gae
from rl_algos.common.sgd import annealed_optimizer, sgd_epochs
from rl_algos.ppo.config import PPOConfig
from rl_algos.ppo.losses import Objective, ValueLossFn, clipped_surrogate, ppo_loss
from rl_core import Agent, Algorithm, DataAxis, RunnerState, TrainResult, rollout
from rl_core import make_train as _make_train


def make_algorithm(
    env: Any,
    config: PPOConfig,
    data_axis: DataAxis | None = None,
    *,
    objective: Objective = clipped_surrogate,
    value_loss_fn: ValueLossFn | None = None,
) -> Algorithm:
    """PPO (or, with another `objective`, a PPO-family method such as DPO or LPO) on `env` (one
    unbatched environment implementing the port); with `data_axis`, one device's share of a
    data-parallel agent (wrap it with `rl_core.data_parallel`). `value_loss_fn` replaces the
    (clipped) squared-error value loss, e.g. by a learned one (see `ppo_loss`)."""
    config.validate()
    n_dev = 1 if data_axis is None else data_axis.size
    if data_axis is not None:
        check_data_parallel(config, n_dev)
    axis_name = None if data_axis is None else data_axis.name
    venv, dist, make_model, static, policy = actor_critic_setup(env, config,
                                                                config.num_envs // n_dev)
    # This device's actors (its environments; times the agents of a multi-agent environment,
    # which the stack batches) and the transitions they collect per update.
    num_envs = venv.num_envs
    batch_size = num_envs * config.num_steps
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    optimizer = annealed_optimizer(config, model=static)
    config.check_pool(env)
    pool_games = config.pool_games(num_envs)
    require(not (pool_games and data_axis is not None),
            "a self-play snapshot pool runs on one device; set pool_size=0 for data parallelism")

    def init(key: jax.Array, hp: Any) -> RunnerState:
        if pool_games:
            return initial_carry(key, make_model, venv, optimizer(hp).init,
                                 lambda p: init_pool(p, config.pool_size))
        return initial_carry(key, make_model, venv, optimizer(hp).init, data_axis=data_axis)

    def act(params: Any, ts: Any, noise: jax.Array):
        return policy.act(Agent(params), ts.observation, noise, False, ts.info.get("action_mask"))

    def act_actor(params: Any, weights_t: Any, ts: Any, noise: jax.Array):
        """`act` without the critic (fast_update values the rollout after it), from the actor's
        weights transposed once per rollout (`actor_weights_t`): the same action and
        log-probability."""
        model = eqx.combine(params, static)
        out = policy_batch_major(model, prepare_observation(Agent(params), ts.observation),
                                 weights_t)
        return act_from_output(dist, out, noise, False, ts.info.get("action_mask"))

    def log_prob_entropy_value(params: Any, mb: Any):
        """`(log_prob [B], entropy [B], value [B])` of the minibatch under `params`."""
        model = eqx.combine(params, static)
        if config.fast_update:
            out_t, value = actor_critic_feature_major(model, mb["obs"])
            return (*log_prob_entropy_feature_major(dist, out_t, model.log_std, mb["action"],
                                                    mb.get("action_mask")), value)
        out, value = jax.vmap(model)(mb["obs"])
        p = dist.params(out, mb.get("action_mask"))
        return dist.log_prob(p, mb["action"]), dist.entropy(p), value

    def loss_fn(params: Any, mb: Any, hp: Any, progress: jax.Array):
        log_prob, entropy, value = log_prob_entropy_value(params, mb)
        return ppo_loss(
            log_prob, mb["log_prob"], mb["adv"], entropy, value, mb["value"], mb["target"], hp,
            clip_value_loss=config.clip_value_loss,
            normalize_advantages=config.normalize_advantages,
            objective=objective,
            value_loss_fn=value_loss_fn,
            axis_name=axis_name,
            weight=(1.0 - mb["snapshot_moved"].astype(jnp.float32)) if pool_games else None,
            progress=progress,
        )

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def acting_of(params: Any) -> Callable[[Any, Any], tuple[jax.Array, Any]]:
        if config.fast_update:
            return partial(act_actor, params, actor_weights_t(eqx.combine(params, static)))
        return partial(act, params)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        key, k_noise = jax.random.split(carry.key)
        model = eqx.combine(ts_.params, static)
        if pool_games:
            key, acting = pool_acting(carry.extras, key, acting_of, ts_.params, num_envs,
                                      pool_games)
        else:
            acting = acting_of(ts_.params)
        (env_state, timestep, key), traj = rollout(
            venv, acting,
            carry.env_state, carry.timestep, key, config.num_steps,
            policy_inputs=policy.noise(k_noise, (config.num_steps, num_envs)),
            precompute_resets=config.fast_update,
        )
        if config.fast_update:  # every observation and true next observation in one pass
            obs = jnp.concatenate([traj.observation, traj.next_observation]).reshape(
                2 * batch_size, *traj.observation.shape[2:])
            values = value_batch_major(model, obs).reshape(2, config.num_steps, num_envs)
            traj = traj._replace(extras={**traj.extras, "value": values[0]})
            next_values = values[1]
        else:
            next_values = jax.vmap(jax.vmap(model.value))(traj.next_observation)
        adv, targets = gae(traj.reward, traj.extras["value"], next_values, traj.terminated,
                           traj.truncated, hp.gamma, hp.gae_lambda, traj.info.get("turn_sign"))
        batch = {"obs": traj.observation, "action": traj.action, "adv": adv, "target": targets,
                 **traj.extras}
        batch = jax.tree.map(lambda x: x.reshape(batch_size, *x.shape[2:]), batch)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(
            partial(grad_fn, hp=hp, progress=ts_.step.astype(jnp.float32) / num_updates),
            optimizer(hp), ts_.params, ts_.opt_state, batch, k_perm,
            n_ep, n_mb, axis_name)
        extras = carry.extras
        if pool_games:
            extras, pool_metrics = pool_epilogue(carry.extras, params, ts_.step,
                                                 config.pool_every, traj, pool_games)
            metrics.update(pool_metrics)
        return next_carry(carry, params, opt_state, (env_state, timestep, key), extras,
                          traj, metrics, data_axis)

    return Algorithm(init, update, num_updates, config.batch_size // n_dev, agent_fn(venv), policy)


def check_data_parallel(config: PPOConfig, num_devices: int) -> None:
    """A data-parallel agent needs an equal share of environments and of every minibatch per
    device, and observation/reward normalisers that would stay per-device are not supported."""
    require(config.num_envs % num_devices == 0,
            f"data parallelism over {num_devices} devices needs num_envs divisible by "
            f"{num_devices}, got num_envs={config.num_envs}; set num_envs to a multiple")
    require(config.minibatch_size % num_devices == 0,
            f"data parallelism over {num_devices} devices needs the minibatch size "
            f"({config.minibatch_size}) divisible by {num_devices}; change num_minibatches")
    require(not (config.normalize_observations or config.normalize_rewards),
            "data parallelism does not support normalize_observations/normalize_rewards (their "
            "running statistics would differ per device); turn them off or run without it")


def make_train(env: Any, config: PPOConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
