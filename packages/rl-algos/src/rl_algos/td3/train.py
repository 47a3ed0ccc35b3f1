"""TD3's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update: `num_steps` steps of `num_envs` environments (uniformly random actions for the first
`learning_starts` environment steps, then `mu(s) + N(0, exploration_noise)` clipped to [-1, 1]),
stored in the on-device replay buffer; then `gradient_steps` critic steps on fresh minibatches,
in groups of `policy_delay`, each group ending with one actor step (on the group's last minibatch)
and the Polyak update of both target networks. Nothing is learnt before `learning_starts`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from rl_algos.common.dense import TwinCritic, critic_loss
from rl_algos.common.offpolicy import (
    ReplayExtras,
    actor_critic_makers,
    box_policy,
    off_policy_setup,
    polyak,
    replay_init,
    replay_update,
    uniform_from_normal,
)
from rl_algos.common.policy import agent_fn
from rl_algos.td3.config import TD3Config
from rl_algos.td3.losses import actor_loss, clipped_double_q_target, smoothed_target_action
from rl_algos.td3.networks import Actor
from rl_core import (
    Agent,
    Algorithm,
    Policy,
    TrainResult,
)
from rl_core import make_train as _make_train


class TD3Params(NamedTuple):
    """The learnt networks (array leaves only; the static parts live in the closure)."""

    actor: Any
    critic: Any


TD3Extras = ReplayExtras  # TD3's own carry: the target networks (`TD3Params`), the buffer


def optimizers(hp: Any) -> tuple[optax.GradientTransformation, optax.GradientTransformation]:
    """Adam for the actor and the critics, each over one flattened parameter vector."""
    return optax.flatten(optax.adam(hp.actor_lr)), optax.flatten(optax.adam(hp.critic_lr))


def make_learn(actor_static: Any, critic_static: Any, policy_delay: int) -> Callable[..., Any]:
    """TD3's learning arithmetic: `learn(hp, params, opt_state, target, batches, std_normal) ->
    (params, opt_state, target, metrics)` (see `learn`), given the static parts of the actor and
    twin critic (`eqx.partition(..., eqx.is_array)[1]`). Apart from the environment so that
    `tools/bench_td3.py --learn-only` times exactly this."""
    d = policy_delay

    def actor_fn(params: Any, obs: jax.Array) -> jax.Array:  # [B, D] -> [B, A]
        return eqx.combine(params, actor_static)(obs)

    def critic_fn(params: Any, obs: jax.Array, action: jax.Array) -> jax.Array:  # -> [B, 2]
        return eqx.combine(params, critic_static)(obs, action)

    def q1_fn(params: Any, obs: jax.Array, action: jax.Array) -> jax.Array:  # -> [B]
        return eqx.combine(params, critic_static).q(0, obs, action)

    def critic_step(hp: Any, tx: Any, target: TD3Params, state: Any, inputs: Any):
        (critic, opt_state), (mb, z) = state, inputs
        next_action = smoothed_target_action(actor_fn(target.actor, mb["next_obs"]), z,
                                             hp.target_noise, hp.target_noise_clip)
        y = clipped_double_q_target(mb["reward"], mb["terminated"],
                                    critic_fn(target.critic, mb["next_obs"], next_action),
                                    hp.gamma)

        def loss(c):
            return critic_loss(critic_fn(c, mb["obs"], mb["action"]), y)

        (_, metrics), grads = jax.value_and_grad(loss, has_aux=True)(critic)
        updates, opt_state = tx.update(grads, opt_state, critic)
        return (optax.apply_updates(critic, updates), opt_state), metrics

    def actor_step(tx: Any, critic: Any, actor: Any, opt_state: Any, obs: jax.Array):
        def loss(a):
            return actor_loss(q1_fn(critic, obs, actor_fn(a, obs)))

        (_, metrics), grads = jax.value_and_grad(loss, has_aux=True)(actor)
        updates, opt_state = tx.update(grads, opt_state, actor)
        return optax.apply_updates(actor, updates), opt_state, metrics

    def learn(hp: Any, params: TD3Params, opt_state: Any, target: TD3Params, batches: Any,
              std_normal: jax.Array):
        """`g / d` groups of (`d` critic steps, one actor step, Polyak on both targets);
        `batches` leaves are `[g/d, d, B, ...]`, `std_normal` `[g/d, d, B, A]` is the standard
        normal draw of every critic step's target-policy smoothing noise."""
        actor_tx, critic_tx = optimizers(hp)

        def group(carry, inputs):
            params, (actor_opt, critic_opt), target = carry
            mbs, zs = inputs
            # The group's `d` critic steps unrolled (d is small): one loop body fewer per group.
            state, c_metrics = (params.critic, critic_opt), []
            for i in range(d):
                state, m = critic_step(hp, critic_tx, target, state,
                                       jax.tree.map(lambda x, i=i: x[i], (mbs, zs)))
                c_metrics.append(m)
            critic, critic_opt = state
            actor, actor_opt, a_metrics = actor_step(
                actor_tx, critic, params.actor, actor_opt, mbs["obs"][-1])
            params = TD3Params(actor, critic)
            target = polyak(target, params, hp.tau)
            c_mean = jax.tree.map(lambda *m: jnp.mean(jnp.stack(m)), *c_metrics)
            metrics = {**c_mean, **a_metrics}
            return (params, (actor_opt, critic_opt), target), metrics

        (params, opt_state, target), metrics = jax.lax.scan(
            group, (params, opt_state, target), (batches, std_normal))
        return params, opt_state, target, jax.tree.map(jnp.mean, metrics)

    return learn


def networks(env: Any, config: TD3Config) -> tuple[Callable[[jax.Array], Actor],
                                                   Callable[[jax.Array], TwinCritic]]:
    """`key -> Actor` and `key -> TwinCritic` over the flattened observation of `env`."""
    return actor_critic_makers(env, config, Actor, TwinCritic, "td3")


def make_policy(env: Any, config: TD3Config) -> Policy:
    """TD3's acting: the actor's action in [-1, 1] rescaled to the Box bounds (greedy), plus
    Gaussian noise of std `explore[0]` clipped to [-1, 1] when sampling; while `explore[1]`
    (the warm-up) the action is uniform instead (`uniform_from_normal` of the same standard
    normal draw `z [N, A]`). `explore=None` samples with the paper's exploration noise, 0.1.
    Extras: the action in [-1, 1] (`unit_action`), which the replay buffer stores."""

    def unit_action(actor: Any, obs: jax.Array, noise: jax.Array, deterministic: bool,
                    explore: Any) -> jax.Array:
        mu = actor(obs)
        if deterministic:
            return mu
        scale, exploring = (0.1, False) if explore is None else explore
        noisy = jnp.clip(mu + scale * noise, -1.0, 1.0)
        return jnp.where(exploring, uniform_from_normal(noise), noisy)

    return box_policy(env, networks(env, config), unit_action, TD3Params)


def make_algorithm(env: Any, config: TD3Config) -> Algorithm:
    """TD3 on `env` (one unbatched environment implementing the port, bounded Box actions)."""
    config.validate()
    setup = off_policy_setup(env, config, networks(env, config))
    actor_static, critic_static, venv = setup.actor_static, setup.critic_static, setup.venv
    policy = make_policy(env, config)
    g, d = config.gradient_steps, config.policy_delay

    learn = make_learn(actor_static, critic_static, d)

    init = replay_init(env, setup, lambda actor, critic, hp: TD3Params(actor, critic),
                       optimizers, lambda params: params)

    def act(params: TD3Params, exploring: jax.Array, hp: Any, ts: Any, z: jax.Array):
        return policy.act(Agent(params), ts.observation, z, False, None,
                          (hp.exploration_noise, exploring))

    update = replay_update(config, setup, act, learn, (g // d, d), (g // d, d))

    return Algorithm(init, update, config.num_updates, config.steps_per_update, agent_fn(venv),
                     policy)


def make_train(env: Any, config: TD3Config) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
