"""PQN's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update = a rollout of `num_steps` on `num_envs` environments with ε-greedy actions over the
legal ones (ε decays linearly from `eps_start` to `eps_finish` over the first `eps_decay` of the
updates); Q(λ) targets over the rollout from the current network (no target network), with the
max over each next state's legal actions; then `num_epochs` passes of `num_minibatches` RAdam
steps on 0.5·(Q(s, a) − G)² with global-norm gradient clipping. No replay buffer: each rollout is
used for one update and dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.config import ConfigError
from rl_algos.common.envs import episode_metrics, make_vector_env
from rl_algos.common.policy import agent_fn, model_structure
from rl_algos.common.sgd import clipped_optimizer, sgd_epochs
from rl_algos.pqn.config import PQNConfig
from rl_algos.pqn.losses import q_lambda_returns, q_loss
from rl_algos.pqn.networks import QNetwork
from rl_core import (
    Agent,
    Algorithm,
    Box,
    Discrete,
    Policy,
    RunnerState,
    TrainResult,
    TrainState,
    rollout,
)
from rl_core import make_train as _make_train

NEG_INF = -1e30  # masked Q-values: below every real one, finite to keep arithmetic clean
# ε of the sampling (non-greedy) evaluation policy: the evaluation ε of Mnih et al. (2015).
EVAL_EPSILON = 0.05


def masked_max(q: jax.Array, mask: jax.Array | None) -> jax.Array:
    """max over the legal actions of `q [..., A]`."""
    return jnp.max(q if mask is None else jnp.where(mask, q, NEG_INF), axis=-1)


def masked_argmax(q: jax.Array, mask: jax.Array | None) -> jax.Array:
    """The legal action of highest Q, `q [N, A] -> [N]` (lowest index among ties)."""
    return jnp.argmax(q if mask is None else jnp.where(mask, q, NEG_INF), axis=-1)


def epsilon_greedy(q: jax.Array, mask: jax.Array | None, eps: jax.Array | float,
                   key: jax.Array) -> jax.Array:
    """int32 `[N]` actions for Q-values `q [N, A]`: with probability `eps` uniform over the legal
    actions (mask True), else the legal action of highest Q."""
    legal = jnp.ones_like(q, jnp.bool_) if mask is None else mask
    greedy = masked_argmax(q, mask)
    k_explore, k_action = jax.random.split(key)
    random_action = jax.random.categorical(k_action, jnp.where(legal, 0.0, -jnp.inf))
    explore = jax.random.uniform(k_explore, greedy.shape) < eps
    return jnp.where(explore, random_action, greedy).astype(jnp.int32)


def epsilon_at(update: jax.Array, num_updates: int, hp: Any) -> jax.Array:
    """Linear decay from eps_start to eps_finish over the first eps_decay of the updates."""
    frac = jnp.clip(update.astype(jnp.float32) / (hp.eps_decay * num_updates), 0.0, 1.0)
    return hp.eps_start + (hp.eps_finish - hp.eps_start) * frac


def check_spaces(env: Any, algo: str = "pqn") -> None:
    """Discrete actions and Box observations, or a `ConfigError` saying what to pick instead."""
    if not isinstance(env.action_space, Discrete):
        raise ConfigError(f"{algo} needs a Discrete action space, got "
                          f"{type(env.action_space).__name__}; pick another algorithm.")
    if not isinstance(env.observation_space, Box):
        raise ConfigError(f"{algo} learns from Box observations, got "
                          f"{type(env.observation_space).__name__}; for discrete states use "
                          "'qlearning'.")


def q_network_model(env: Any, config: PQNConfig) -> Callable[[jax.Array], QNetwork]:
    """`key -> QNetwork` over the environment's own observation shape (not flattened: an image
    gets the convolution)."""
    return partial(QNetwork, obs_shape=tuple(env.observation_space.shape),
                   num_actions=env.action_space.n, hidden_size=config.hidden_size,
                   num_layers=config.num_layers, cnn_channels=config.cnn_channels)


def q_policy(make_model: Callable[[jax.Array], Any]) -> Policy:
    """The ε-greedy acting of a Q-network `key -> model` (`model(obs) -> Q [A]`, applied per
    observation) that PQN and DQN share: greedy over the legal actions, or ε-greedy with ε =
    `explore` (the schedule's value while training; `EVAL_EPSILON` when None). The noise is a
    key."""
    params_like, static = model_structure(make_model)

    def act(agent: Agent, obs: jax.Array, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        q = jax.vmap(eqx.combine(agent.params, static))(obs)  # [N, A]
        if deterministic:
            return masked_argmax(q, mask).astype(jnp.int32), {}
        eps = EVAL_EPSILON if explore is None else explore
        return epsilon_greedy(q, mask, eps, noise), {}

    return Policy(Agent(params_like), act, lambda key, shape: key)


def make_policy(env: Any, config: PQNConfig) -> Policy:
    """PQN's acting: `q_policy` of its Q-network."""
    check_spaces(env)
    return q_policy(q_network_model(env, config))


def make_algorithm(env: Any, config: PQNConfig) -> Algorithm:
    """PQN on `env` (one unbatched environment implementing the port, Discrete actions)."""
    config.validate()
    check_spaces(env)
    venv = make_vector_env(env, config.num_envs, flatten=False)
    make_model = q_network_model(env, config)
    static = model_structure(make_model)[1]
    policy = make_policy(env, config)
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    def optimizer(hp: Any) -> Any:
        return clipped_optimizer(hp.lr, hp.max_grad_norm, kind="radam",
                                 anneal_updates=num_updates if config.anneal_lr else None,
                                 steps_per_update=n_mb * n_ep)

    def q_values(params: Any, obs: jax.Array) -> jax.Array:
        return jax.vmap(eqx.combine(params, static))(obs)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        k_model, k_env, k_run = jax.random.split(key, 3)
        params = eqx.filter(make_model(k_model), eqx.is_array)
        env_state, ts = venv.reset(k_env)
        train_state = TrainState(params, optimizer(hp).init(params), jnp.zeros((), jnp.int32))
        return RunnerState(train_state, env_state, ts, k_run)

    def act(params: Any, eps: jax.Array, ts: Any, key: jax.Array):
        return policy.act(Agent(params), ts.observation, key, False, ts.info.get("action_mask"),
                          eps)

    def loss_fn(params: Any, mb: Any):
        q = q_values(params, mb["obs"])
        q_taken = jnp.take_along_axis(q, mb["action"][:, None], axis=-1)[:, 0]
        return q_loss(q_taken, mb["target"], None)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        eps = epsilon_at(ts_.step, num_updates, hp)
        (env_state, timestep, key), traj = rollout(
            venv, partial(act, ts_.params, eps), carry.env_state, carry.timestep, carry.key,
            config.num_steps,
        )
        next_q = jax.vmap(partial(q_values, ts_.params))(traj.next_observation)  # [T, N, A]
        # The legal actions of each true next state: after an episode ends `action_mask` is
        # the new episode's, so take the final state's (kept by AutoReset); a terminated step
        # does not bootstrap, a truncated one bootstraps over its final state's legal actions.
        next_mask = traj.info.get("final_action_mask", traj.info.get("action_mask"))
        targets = q_lambda_returns(traj.reward * hp.reward_scale, masked_max(next_q, next_mask),
                                   traj.terminated, traj.truncated, hp.gamma, hp.q_lambda)
        batch = {"obs": traj.observation, "action": traj.action, "target": targets}
        batch = jax.tree.map(lambda x: x.reshape(config.batch_size, *x.shape[2:]), batch)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(grad_fn, optimizer(hp), ts_.params,
                                                ts_.opt_state, batch, k_perm, n_ep, n_mb)
        metrics["epsilon"] = eps
        metrics.update(episode_metrics(traj.info, traj.terminated, traj.truncated))
        new_ts = TrainState(params, opt_state, ts_.step + 1)
        return RunnerState(new_ts, env_state, timestep, key, carry.extras), metrics

    return Algorithm(init, update, num_updates, config.batch_size, agent_fn(venv), policy)


def make_train(env: Any, config: PQNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
