"""SAC's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update: `num_steps` steps of `num_envs` environments (uniformly random actions for the first
`learning_starts` environment steps, then samples of the squashed Gaussian policy), stored in the
on-device replay buffer shared with TD3; then `gradient_steps` steps, each on a fresh minibatch:
the twin critics towards the soft clipped double-Q target, the actor, the temperature, and the
Polyak update of the target critics. Nothing is learnt before `learning_starts`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from rl_algos.common import offpolicy
from rl_algos.common.dense import TwinCritic, critic_loss
from rl_algos.common.policy import agent_fn
from rl_algos.sac.config import SACConfig
from rl_algos.sac.losses import (
    sac_actor_loss,
    sample_squashed,
    soft_q_target,
    temperature_loss,
)
from rl_algos.sac.networks import GaussianActor
from rl_core import (
    Agent,
    Algorithm,
    Policy,
    TrainResult,
)
from rl_core import make_train as _make_train


class SACParams(NamedTuple):
    """The learnt parts: actor, twin critics, and the log-temperature (float32 `[]`)."""

    actor: Any
    critic: Any
    log_alpha: jax.Array


# SAC's own carry: the target critics, the replay buffer's state
SACExtras = offpolicy.ReplayExtras


def networks(env: Any, config: SACConfig) -> tuple[Callable[[jax.Array], GaussianActor],
                                                   Callable[[jax.Array], TwinCritic]]:
    """`key -> GaussianActor` and `key -> TwinCritic` over the flattened observation of `env`."""
    return offpolicy.actor_critic_makers(env, config, GaussianActor, TwinCritic, "sac")


def make_policy(env: Any, config: SACConfig) -> Policy:
    """SAC's acting: `tanh(mean)` rescaled to the Box bounds (greedy), or `tanh(mean + std z)`
    (sampling, `z [N, A]` a standard normal draw); with `explore` True (the warm-up) the action
    is uniform instead (`uniform_from_normal` of the same draw). Extras: the action in [-1, 1]
    (`unit_action`), which the replay buffer stores."""

    def unit_action(actor: Any, obs: jax.Array, noise: jax.Array, deterministic: bool,
                    explore: Any) -> jax.Array:
        mean, log_std = actor(obs)
        if deterministic:
            return jnp.tanh(mean)
        unit = jnp.tanh(mean + jnp.exp(log_std) * noise)
        if explore is not None:
            unit = jnp.where(explore, offpolicy.uniform_from_normal(noise), unit)
        return unit

    scalar: Any = jax.ShapeDtypeStruct((), jnp.float32)  # the log-temperature's structure
    return offpolicy.box_policy(env, networks(env, config), unit_action,
                      lambda actor, critic: SACParams(actor, critic, scalar))


def optimizers(hp: Any) -> tuple[Any, Any, Any]:
    """Adam for the actor, the critics and the log-temperature."""
    return (optax.flatten(optax.adam(hp.actor_lr)), optax.flatten(optax.adam(hp.critic_lr)),
            optax.adam(hp.alpha_lr))


def make_algorithm(env: Any, config: SACConfig) -> Algorithm:
    """SAC on `env` (one unbatched environment implementing the port, bounded Box actions)."""
    config.validate()
    setup = offpolicy.off_policy_setup(env, config, networks(env, config))
    actor_static, critic_static, venv, d_act = (setup.actor_static, setup.critic_static,
                                                setup.venv, setup.d_act)
    policy = make_policy(env, config)
    g = config.gradient_steps

    def actor_fn(params: Any, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        return eqx.combine(params, actor_static)(obs)

    def critic_fn(params: Any, obs: jax.Array, action: jax.Array) -> jax.Array:  # [B, 2]
        return eqx.combine(params, critic_static)(obs, action)

    def make_params(actor: Any, critic: Any, hp: Any) -> SACParams:
        return SACParams(actor, critic, jnp.log(jnp.asarray(hp.init_alpha, jnp.float32)))

    init = offpolicy.replay_init(env, setup, make_params, optimizers, lambda params: params.critic)

    def act(params: SACParams, exploring: jax.Array, hp: Any, ts: Any, z: jax.Array):
        return policy.act(Agent(params), ts.observation, z, False, None, exploring)

    def gradient_step(hp: Any, carry: Any, inputs: Any):
        params, opt_state, target_critic = carry
        mb, z_next, z_pi = inputs
        actor_tx, critic_tx, alpha_tx = optimizers(hp)
        actor_opt, critic_opt, alpha_opt = opt_state
        alpha = jnp.exp(params.log_alpha)

        mean, log_std = actor_fn(params.actor, mb["next_obs"])
        next_action, next_log_prob = sample_squashed(mean, log_std, z_next)
        y = soft_q_target(mb["reward"], mb["terminated"],
                          critic_fn(target_critic, mb["next_obs"], next_action), next_log_prob,
                          alpha, hp.gamma)
        (_, c_metrics), grads = jax.value_and_grad(
            lambda c: critic_loss(critic_fn(c, mb["obs"], mb["action"]), y), has_aux=True
        )(params.critic)
        updates, critic_opt = critic_tx.update(grads, critic_opt, params.critic)
        critic = optax.apply_updates(params.critic, updates)

        def actor_objective(a):
            mean, log_std = actor_fn(a, mb["obs"])
            action, log_prob = sample_squashed(mean, log_std, z_pi)
            loss, metrics = sac_actor_loss(critic_fn(critic, mb["obs"], action), log_prob, alpha)
            return loss, (metrics, log_prob)

        (_, (a_metrics, log_prob)), grads = jax.value_and_grad(
            actor_objective, has_aux=True)(params.actor)
        updates, actor_opt = actor_tx.update(grads, actor_opt, params.actor)
        actor = optax.apply_updates(params.actor, updates)

        target_entropy = hp.target_entropy_per_dim * d_act
        (_, t_metrics), grad = jax.value_and_grad(temperature_loss, has_aux=True)(
            params.log_alpha, log_prob, target_entropy)
        updates, alpha_opt = alpha_tx.update(grad, alpha_opt, params.log_alpha)
        log_alpha = optax.apply_updates(params.log_alpha, updates)

        params = SACParams(actor, critic, log_alpha)
        target_critic = offpolicy.polyak(target_critic, critic, hp.tau)
        metrics = {**c_metrics, **a_metrics, **t_metrics}
        return (params, (actor_opt, critic_opt, alpha_opt), target_critic), metrics

    def learn(hp: Any, params: Any, opt_state: Any, target_critic: Any, batches: Any,
              z: jax.Array):  # z [2, g, B, A]: the target's and the actor's noise
        (params, opt_state, target_critic), metrics = jax.lax.scan(
            partial(gradient_step, hp), (params, opt_state, target_critic),
            (batches, z[0], z[1]))
        return params, opt_state, target_critic, jax.tree.map(jnp.mean, metrics)

    # The learning's normals: the target's, then the actor's reparameterisation noise.
    update = offpolicy.replay_update(config, setup, act, learn, (g,), (2, g))

    return Algorithm(init, update, config.num_updates, config.steps_per_update, agent_fn(venv),
                     policy)


def make_train(env: Any, config: SACConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
