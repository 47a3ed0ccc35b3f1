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
import optax

from rl_algos.common.config import ConfigError
from rl_algos.common.envs import episode_metrics, make_vector_env
from rl_algos.common.policy import Policy, model_structure
from rl_algos.common.shuffle import shuffled_minibatches
from rl_algos.pqn.config import PQNConfig
from rl_algos.pqn.losses import q_lambda_returns, q_loss
from rl_algos.pqn.networks import QNetwork
from rl_core import Algorithm, Box, Discrete, RunnerState, TrainResult, TrainState, rollout
from rl_core import make_train as _make_train

NEG_INF = -1e30  # masked Q-values: below every real one, finite to keep arithmetic clean


def masked_max(q: jax.Array, mask: jax.Array | None) -> jax.Array:
    """max over the legal actions of `q [..., A]`."""
    return jnp.max(q if mask is None else jnp.where(mask, q, NEG_INF), axis=-1)


def epsilon_greedy(q: jax.Array, mask: jax.Array | None, eps: jax.Array | float,
                   key: jax.Array) -> jax.Array:
    """int32 `[N]` actions for Q-values `q [N, A]`: with probability `eps` uniform over the legal
    actions (mask True), else the legal action of highest Q."""
    legal = jnp.ones_like(q, jnp.bool_) if mask is None else mask
    greedy = jnp.argmax(jnp.where(legal, q, NEG_INF), axis=-1)
    k_explore, k_action = jax.random.split(key)
    random_action = jax.random.categorical(k_action, jnp.where(legal, 0.0, -jnp.inf))
    explore = jax.random.uniform(k_explore, greedy.shape) < eps
    return jnp.where(explore, random_action, greedy).astype(jnp.int32)


def epsilon_at(update: jax.Array, num_updates: int, hp: Any) -> jax.Array:
    """Linear decay from eps_start to eps_finish over the first eps_decay of the updates."""
    frac = jnp.clip(update.astype(jnp.float32) / (hp.eps_decay * num_updates), 0.0, 1.0)
    return hp.eps_start + (hp.eps_finish - hp.eps_start) * frac


def make_algorithm(env: Any, config: PQNConfig) -> Algorithm:
    """PQN on `env` (one unbatched environment implementing the port, Discrete actions)."""
    config.validate()
    if not isinstance(env.action_space, Discrete):
        raise ConfigError(f"pqn needs a Discrete action space, got "
                          f"{type(env.action_space).__name__}; pick another algorithm.")
    if not isinstance(env.observation_space, Box):
        raise ConfigError(f"pqn learns from Box observations, got "
                          f"{type(env.observation_space).__name__}; for discrete states use "
                          "'qlearning'.")
    venv = make_vector_env(env, config.num_envs, flatten=False)
    num_actions = env.action_space.n
    make_model = partial(QNetwork, obs_shape=tuple(venv.observation_space.shape),
                         num_actions=num_actions, hidden_size=config.hidden_size,
                         num_layers=config.num_layers, cnn_channels=config.cnn_channels)
    _, static = eqx.partition(eqx.filter_eval_shape(make_model, jax.random.PRNGKey(0)),
                              eqx.is_array)
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    def optimizer(hp: Any) -> optax.GradientTransformation:
        if config.anneal_lr:
            def lr(count):
                return hp.lr * (1.0 - (count // (n_mb * n_ep)) / num_updates)
        else:
            lr = hp.lr
        return optax.flatten(optax.chain(optax.clip_by_global_norm(hp.max_grad_norm),
                                         optax.radam(lr)))

    def q_values(params: Any, obs: jax.Array) -> jax.Array:
        return jax.vmap(eqx.combine(params, static))(obs)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        k_model, k_env, k_run = jax.random.split(key, 3)
        params = eqx.filter(make_model(k_model), eqx.is_array)
        env_state, ts = venv.reset(k_env)
        train_state = TrainState(params, optimizer(hp).init(params), jnp.zeros((), jnp.int32))
        return RunnerState(train_state, env_state, ts, k_run)

    def act(params: Any, eps: jax.Array, ts: Any, key: jax.Array):
        q = q_values(params, ts.observation)  # [N, A]
        return epsilon_greedy(q, ts.info.get("action_mask"), eps, key), {}

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
        tx = optimizer(hp)

        def minibatch_step(state, mb):
            params, opt_state = state
            (_, metrics), grads = grad_fn(params, mb)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), metrics

        def epoch(state, k):
            return jax.lax.scan(minibatch_step, state, shuffled_minibatches(k, batch, n_mb))

        key, k_perm = jax.random.split(key)
        (params, opt_state), metrics = jax.lax.scan(
            epoch, (ts_.params, ts_.opt_state), jax.random.split(k_perm, n_ep))
        metrics = jax.tree.map(jnp.mean, metrics)
        metrics["epsilon"] = eps
        metrics.update(episode_metrics(traj.info, traj.terminated, traj.truncated))
        new_ts = TrainState(params, opt_state, ts_.step + 1)
        return RunnerState(new_ts, env_state, timestep, key, carry.extras), metrics

    return Algorithm(init, update, num_updates, config.batch_size)


def make_policy(env: Any, config: PQNConfig, eps: float = 0.0) -> Policy:
    """Acting with trained PQN parameters: greedy over the legal actions, or ε-greedy with
    `eps` when `greedy=False`."""
    make_model = partial(QNetwork, obs_shape=tuple(env.observation_space.shape),
                         num_actions=env.action_space.n, hidden_size=config.hidden_size,
                         num_layers=config.num_layers, cnn_channels=config.cnn_channels)
    like, static = model_structure(make_model)

    def act(params: Any, obs: jax.Array, mask: jax.Array | None, key: jax.Array,
            greedy: bool) -> jax.Array:
        q = jax.vmap(eqx.combine(params, static))(obs)
        return epsilon_greedy(q, mask, 0.0 if greedy else eps, key)

    return Policy(like, act)


def make_train(env: Any, config: PQNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
