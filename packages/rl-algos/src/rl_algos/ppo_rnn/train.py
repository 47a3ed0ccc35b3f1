"""Recurrent PPO's training program (PureJaxRL's ppo_rnn.py on the shared skeleton).

One update = a rollout of `num_steps` on `num_envs` environments with the policy's memory (the
GRU's hidden state, `[num_envs, rnn_hidden]`, lives in the carry's `extras` and is reset where a
step's observation begins a new episode), GAE over it (bootstrapping on truncation from the value
of the true final observation seen from the step's own hidden state), then `num_epochs` passes of
`num_minibatches` Adam steps on PPO's loss, each minibatch a set of whole environments whose
sequences are replayed from the hidden state the rollout started with and the stored `first`
flags, so the loss sees exactly the outputs the rollout acted on.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.distributions import distribution_for
from rl_algos.common.envs import make_vector_env
from rl_algos.common.policy import agent_fn, model_structure
from rl_algos.common.recurrent import (
    recurrent_actor_critic_policy,
    recurrent_model,
    sequence_batch,
)
from rl_algos.common.returns import gae
from rl_algos.common.sgd import annealed_optimizer, sgd_epochs
from rl_algos.ppo.losses import ppo_loss
from rl_algos.ppo_rnn.config import PPORNNConfig
from rl_core import Agent, Algorithm, Policy, RunnerState, TrainResult, recurrent_rollout
from rl_core import make_train as _make_train


def make_policy(env: Any, config: PPORNNConfig) -> Policy:
    """The recurrent actor-critic policy (`common.recurrent`), with memory."""
    return recurrent_actor_critic_policy(env, config)


def replay(model: Any, mb: dict[str, jax.Array]) -> tuple[Any, jax.Array]:
    """Policy outputs and values of a minibatch of sequences (`[n, T, ...]`), recomputed from
    their stored initial hidden states and `first` flags, flattened to `[n*T, ...]`."""
    out, value = jax.vmap(model.sequence)(mb["h0"], mb["obs"], mb["first"])
    return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), (out, value))


def make_algorithm(env: Any, config: PPORNNConfig) -> Algorithm:
    """Recurrent PPO on `env` (one unbatched environment implementing the port)."""
    config.validate()
    num_steps = config.num_steps
    venv = make_vector_env(env, config.num_envs,
                           normalize_observations=config.normalize_observations,
                           normalize_rewards=config.normalize_rewards)
    num_envs = venv.num_envs  # the actors: environments, times the agents of a multi-agent one
    dist: Any = distribution_for(env.action_space)
    make_model = recurrent_model(env, config)
    static = model_structure(make_model)[1]
    policy = make_policy(env, config)
    assert policy.initial_state is not None and policy.step is not None
    initial_state, policy_step = policy.initial_state, policy.step
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    optimizer = annealed_optimizer(config, model=static)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        return initial_carry(key, make_model, venv, optimizer(hp).init,
                             lambda p: initial_state(num_envs))

    def act(params: Any, ts: Any, noise: jax.Array, h: jax.Array):
        first = jnp.logical_or(ts.terminated, ts.truncated)  # the previous step ended an episode
        action, extras, h = policy_step(Agent(params), h, ts.observation, first, noise, False,
                                        ts.info.get("action_mask"))
        return action, {**extras, "first": first, "hidden": h}, h

    def loss_fn(params: Any, mb: Any, hp: Any):
        out, value = replay(eqx.combine(params, static), mb)
        flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]),
                            {k: v for k, v in mb.items() if k != "h0"})
        p = dist.params(out, flat.get("action_mask"))
        return ppo_loss(
            dist.log_prob(p, flat["action"]), flat["log_prob"], flat["adv"], dist.entropy(p),
            value, flat["value"], flat["target"], hp,
            clip_value_loss=config.clip_value_loss,
            normalize_advantages=config.normalize_advantages,
        )

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        h0 = carry.extras
        key, k_noise = jax.random.split(carry.key)
        (h, env_state, timestep, key), traj = recurrent_rollout(
            venv, partial(act, ts_.params), h0, carry.env_state, carry.timestep, key, num_steps,
            policy_inputs=policy.noise(k_noise, (num_steps, num_envs)),
        )
        model = eqx.combine(ts_.params, static)
        # The value of each step's true next observation, from the state after that step (the
        # same episode's, never reset): the bootstrap of a truncated episode.
        next_values = jax.vmap(jax.vmap(model.value))(traj.extras["hidden"], traj.next_observation)
        adv, targets = gae(traj.reward, traj.extras["value"], next_values, traj.terminated,
                           traj.truncated, hp.gamma, hp.gae_lambda)
        batch = sequence_batch(traj, h0, adv=adv, target=targets)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(
            partial(grad_fn, hp=hp), optimizer(hp), ts_.params, ts_.opt_state, batch, k_perm,
            n_ep, n_mb)
        return next_carry(carry, params, opt_state, (env_state, timestep, key), h, traj,
                          metrics)

    return Algorithm(init, update, num_updates, config.batch_size, agent_fn(venv), policy)


def make_train(env: Any, config: PPORNNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
