"""Recurrent PQN's training program (purejaxql's `pqn_rnn` on the shared skeleton).

One update = a rollout of `num_steps` on `num_envs` environments, ε-greedy over the legal actions
with the network's memory (the GRU's hidden state `[num_envs, rnn_hidden]` lives in the carry's
`extras` and is reset where a step's observation begins a new episode); Q(λ) targets from the
current network, each step's next-state maximum computed from the hidden state after that step
(the same episode's, never reset: a truncated step bootstraps from its true final observation);
then `num_epochs` passes of `num_minibatches` RAdam steps on 0.5·(Q(s, a) − G)², each minibatch a
set of whole environments whose sequences are replayed from the hidden state the rollout started
with and the stored `first` flags, so the loss scores exactly the Q-values the rollout acted on.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.envs import make_vector_env
from rl_algos.common.networks import orthogonal_linear
from rl_algos.common.policy import (
    agent_fn,
    flat_size,
    model_structure,
    obs_norm_like,
    prepare_observation,
)
from rl_algos.common.qvalues import (
    EVAL_EPSILON,
    check_spaces,
    epsilon_at,
    epsilon_greedy,
    masked_argmax,
    masked_max,
    q_lambda_returns,
    q_loss,
)
from rl_algos.common.recurrent import gru_sequence, reset_hidden, sequence_batch
from rl_algos.common.sgd import annealed_optimizer, sgd_epochs
from rl_algos.pqn_rnn.config import PQNRNNConfig
from rl_core import Agent, Algorithm, Policy, RunnerState, TrainResult, recurrent_rollout
from rl_core import make_train as _make_train


class RecurrentQNetwork(eqx.Module):
    """For one environment: `num_layers` dense layers (LayerNorm, ReLU) on the flattened
    observation `[d_obs]`, a `eqx.nn.GRUCell` of `rnn_hidden` units, a linear head to Q
    `[num_actions]`. `step(h [H], x, first []) -> (h' [H], Q [A])` resets `h` first where
    `first` (a new episode)."""

    layers: list[eqx.nn.Linear]
    norms: list[eqx.nn.LayerNorm]
    cell: eqx.nn.GRUCell
    head: eqx.nn.Linear

    def __init__(self, key: jax.Array, d_obs: int, num_actions: int, hidden_size: int,
                 num_layers: int, rnn_hidden: int):
        k_cell, k_head, *k_layers = jax.random.split(key, 2 + num_layers)
        sizes = [d_obs] + [hidden_size] * num_layers
        self.layers = [orthogonal_linear(k, a, b, 2.0**0.5)
                       for k, a, b in zip(k_layers, sizes[:-1], sizes[1:], strict=True)]
        self.norms = [eqx.nn.LayerNorm(hidden_size) for _ in range(num_layers)]
        self.cell = eqx.nn.GRUCell(sizes[-1], rnn_hidden, key=k_cell)
        self.head = orthogonal_linear(k_head, rnn_hidden, num_actions, 1.0)

    def embed(self, x: jax.Array) -> jax.Array:
        """The dense layers' output `[hidden_size]`: the GRU's input."""
        x = x.astype(jnp.float32)
        for layer, norm in zip(self.layers, self.norms, strict=True):
            x = jax.nn.relu(norm(layer(x)))
        return x

    def core(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """The next hidden state after observing `x` from state `h` (no reset)."""
        return self.cell(self.embed(x), h)

    def step(self, h: jax.Array, x: jax.Array, first: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = self.core(reset_hidden(h, first), x)
        return h, self.head(h)

    def next_q(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """Q `[A]` of observing `x` from the state `h` without a reset (a step's true next
        observation, seen from the state after the step: the same episode's)."""
        return self.head(self.core(h, x))

    def sequence(self, h0: jax.Array, xs: jax.Array, firsts: jax.Array) -> jax.Array:
        """One environment's stored sequence replayed: `xs [T, d_obs]`, `firsts [T]` from the
        state `h0 [H]` the rollout started from -> Q `[T, A]`, what the rollout computed: the
        dense layers and the head run on all T steps at once, only the GRU's recurrence step by
        step (`gru_sequence`)."""
        hs = gru_sequence(self.cell, h0, jax.vmap(self.embed)(xs), firsts)
        return jax.vmap(self.head)(hs)


def q_network_model(env: Any, config: PQNRNNConfig) -> Callable[[jax.Array], RecurrentQNetwork]:
    return partial(RecurrentQNetwork, d_obs=flat_size(env.observation_space),
                   num_actions=env.action_space.n, hidden_size=config.hidden_size,
                   num_layers=config.num_layers, rnn_hidden=config.rnn_hidden)


def make_policy(env: Any, config: PQNRNNConfig) -> Policy:
    """ε-greedy acting with memory: state `[N, rnn_hidden]` zeros at an episode's start; `step`
    resets it where `first`, advances the GRU on the flattened observation and acts greedily
    over the legal actions, or ε-greedily with ε = `explore` (the schedule's value in training;
    `EVAL_EPSILON` when None). The noise is a key. `act` is `step` from fresh states."""
    check_spaces(env, "pqn_rnn")
    params_like, static = model_structure(q_network_model(env, config))
    like = Agent(params_like, obs_norm_like(config, flat_size(env.observation_space)))

    def initial_state(n: int) -> jax.Array:
        return jnp.zeros((n, config.rnn_hidden), jnp.float32)

    def step(agent: Agent, state: jax.Array, obs: Any, first: jax.Array, noise: jax.Array,
             deterministic: bool, mask: jax.Array | None = None,
             explore: Any = None) -> tuple[jax.Array, Any, jax.Array]:
        model = eqx.combine(agent.params, static)
        h, q = jax.vmap(model.step)(state, prepare_observation(agent, obs), first)
        if deterministic:
            return masked_argmax(q, mask).astype(jnp.int32), {}, h
        eps = EVAL_EPSILON if explore is None else explore
        return epsilon_greedy(q, mask, eps, noise), {}, h

    def act(agent: Agent, obs: Any, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        n = jax.tree.leaves(obs)[0].shape[0]
        action, extras, _ = step(agent, initial_state(n), obs, jnp.ones((n,), jnp.bool_), noise,
                                 deterministic, mask, explore)
        return action, extras

    return Policy(like, act, lambda key, shape: key, initial_state, step)


def q_lambda_targets(model: RecurrentQNetwork, traj: Any, hp: Any) -> jax.Array:
    """Q(λ) targets `[T, N]` of a rollout (`common.qvalues.q_lambda_returns`), each step's
    next-state max over the legal actions computed from the hidden state after that step
    (`extras["hidden"]`, the same episode's, never reset), so a truncated step bootstraps from
    its true final observation seen with the episode's own memory."""
    next_q = jax.vmap(jax.vmap(model.next_q))(traj.extras["hidden"], traj.next_observation)
    next_mask = traj.info.get("final_action_mask", traj.info.get("action_mask"))
    return q_lambda_returns(traj.reward * hp.reward_scale, masked_max(next_q, next_mask),
                            traj.terminated, traj.truncated, hp.gamma, hp.q_lambda)


def make_algorithm(env: Any, config: PQNRNNConfig) -> Algorithm:
    """Recurrent PQN on `env` (one unbatched environment implementing the port, Discrete
    actions)."""
    config.validate()
    check_spaces(env, "pqn_rnn")
    num_envs, num_steps = config.num_envs, config.num_steps
    venv = make_vector_env(env, num_envs)
    static = model_structure(q_network_model(env, config))[1]
    policy = make_policy(env, config)
    assert policy.initial_state is not None and policy.step is not None
    initial_state, policy_step = policy.initial_state, policy.step
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    optimizer = annealed_optimizer(config, kind="radam")

    def init(key: jax.Array, hp: Any) -> RunnerState:
        return initial_carry(key, q_network_model(env, config), venv, optimizer(hp).init,
                             lambda p: initial_state(num_envs))

    def act(params: Any, eps: jax.Array, ts: Any, key: jax.Array, h: jax.Array):
        first = jnp.logical_or(ts.terminated, ts.truncated)  # the previous step ended an episode
        action, _, h = policy_step(Agent(params), h, ts.observation, first, key, False,
                                   ts.info.get("action_mask"), eps)
        return action, {"first": first, "hidden": h}, h

    def loss_fn(params: Any, mb: Any):
        q = jax.vmap(eqx.combine(params, static).sequence)(mb["h0"], mb["obs"], mb["first"])
        q_taken = jnp.take_along_axis(q, mb["action"][..., None], axis=-1)[..., 0]
        return q_loss(q_taken, mb["target"], None)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        h0 = carry.extras
        eps = epsilon_at(ts_.step, num_updates, hp)
        key, k_steps = jax.random.split(carry.key)
        (h, env_state, timestep, key), traj = recurrent_rollout(
            venv, partial(act, ts_.params, eps), h0, carry.env_state, carry.timestep, key,
            num_steps, policy_inputs=jax.random.split(k_steps, num_steps))
        targets = q_lambda_targets(eqx.combine(ts_.params, static), traj, hp)
        batch = sequence_batch(traj, h0, target=targets)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(grad_fn, optimizer(hp), ts_.params,
                                                ts_.opt_state, batch, k_perm, n_ep, n_mb)
        metrics["epsilon"] = eps
        return next_carry(carry, params, opt_state, (env_state, timestep, key), h, traj,
                          metrics)

    return Algorithm(init, update, num_updates, config.batch_size, agent_fn(venv), policy)


def make_train(env: Any, config: PQNRNNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
