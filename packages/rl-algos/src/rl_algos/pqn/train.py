"""PQN's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update = a rollout of `num_steps` on `num_envs` environments with ε-greedy actions over the
legal ones (ε decays linearly from `eps_start` to `eps_finish` over the first `eps_decay` of the
updates); Q(λ) targets over the rollout from the current network (no target network), with the
max over each next state's legal actions; then `num_epochs` passes of `num_minibatches` RAdam
steps on 0.5·(Q(s, a) − G)² with global-norm gradient clipping. No replay buffer: each rollout is
used for one update and dropped.

In self-play with `pool_size > 0` (`rl_algos.common.pool`) the carry's `extras` is the
`SnapshotPool`, and in a share of the environments player 1's moves are a past snapshot's; every
move, the learner's or the snapshot's, is a transition of the game that Q-learning learns from
(its targets are off-policy already).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.policy import agent_fn
from rl_algos.common.pool import init_pool, pool_acting, pool_epilogue
from rl_algos.common.qnetwork import QNetwork
from rl_algos.common.qvalues import (
    check_spaces,
    epsilon_at,
    masked_max,
    q_agent,
    q_lambda_returns,
    q_loss,
    q_policy,
)
from rl_algos.common.sgd import annealed_optimizer, sgd_epochs
from rl_algos.pqn.config import PQNConfig
from rl_core import Algorithm, Policy, RunnerState, TrainResult, any_member, rollout
from rl_core import make_train as _make_train


def q_network_model(env: Any, config: PQNConfig) -> Callable[[jax.Array], QNetwork]:
    """`key -> QNetwork` over the environment's own observation shape (not flattened: an image
    gets the convolution)."""
    return partial(QNetwork, obs_shape=tuple(env.observation_space.shape),
                   num_actions=env.action_space.n, hidden_size=config.hidden_size,
                   num_layers=config.num_layers, cnn_channels=config.cnn_channels)


def make_policy(env: Any, config: PQNConfig) -> Policy:
    """PQN's acting: `q_policy` of its Q-network."""
    check_spaces(env, "pqn")
    return q_policy(q_network_model(env, config))


def next_q_values(q_values: Callable[[Any, jax.Array], jax.Array], params: Any, traj: Any,
                  reuse_acted: bool) -> jax.Array:
    """`Q(s'_t) [T, N, A]` of every true next state of a rollout, under the parameters that
    acted (`q_values(params, obs [B, ...]) -> [B, A]`).

    With `reuse_acted`, while no episode was truncated before the last step, these are the
    values the rollout acted on one step later (`Q(s_{t+1})`, the policy's extras `q`) and one
    pass over the last next states: where an episode terminated, `s_{t+1}` is the next
    episode's first state, but a terminated step does not bootstrap. A truncated step bootstraps
    from its final state, which nothing has valued yet, and then every next state is valued in
    one pass. Under `vmap` (several members) the pass runs when any member needs it
    (`rl_core.any_member`) and each member keeps the values its own test chose. Without it
    (self-play against a pool, where some moves were a snapshot's and their values not the
    learner's), always the pass."""
    def every_next_state() -> jax.Array:
        return jax.vmap(partial(q_values, params))(traj.next_observation)

    if not reuse_acted:
        return every_next_state()

    def acted_one_step_later() -> jax.Array:
        last = q_values(params, traj.next_observation[-1])
        return jnp.concatenate([traj.extras["q"][1:], last[None]])

    needs_pass = jnp.any(traj.truncated[:-1])
    return jax.lax.cond(
        any_member(needs_pass),
        lambda: jnp.where(needs_pass, every_next_state(), acted_one_step_later()),
        acted_one_step_later)


def make_algorithm(env: Any, config: PQNConfig) -> Algorithm:
    """PQN on `env` (one unbatched environment implementing the port, Discrete actions)."""
    config.validate()
    check_spaces(env, "pqn")
    venv, make_model, policy, q_values, act = q_agent(env, q_network_model(env, config),
                                                      config.num_envs)
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs
    config.check_pool(env)
    pool_games = config.pool_games(config.num_envs)

    optimizer = annealed_optimizer(config, kind="radam")

    def init(key: jax.Array, hp: Any) -> RunnerState:
        if pool_games:
            return initial_carry(key, make_model, venv, optimizer(hp).init,
                                 lambda p: init_pool(p, config.pool_size))
        return initial_carry(key, make_model, venv, optimizer(hp).init)

    def loss_fn(params: Any, mb: Any):
        q = q_values(params, mb["obs"])
        q_taken = jnp.take_along_axis(q, mb["action"][:, None], axis=-1)[:, 0]
        return q_loss(q_taken, mb["target"], None)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        eps = epsilon_at(ts_.step, num_updates, hp)
        key = carry.key
        if pool_games:
            key, acting = pool_acting(carry.extras, key, lambda p: partial(act, p, eps),
                                      ts_.params, config.num_envs, pool_games)
        else:
            acting = partial(act, ts_.params, eps)
        (env_state, timestep, key), traj = rollout(venv, acting, carry.env_state, carry.timestep,
                                                   key, config.num_steps)
        next_q = next_q_values(q_values, ts_.params, traj, reuse_acted=not pool_games)
        # The legal actions of each true next state: after an episode ends `action_mask` is
        # the new episode's, so take the final state's (kept by AutoReset); a terminated step
        # does not bootstrap, a truncated one bootstraps over its final state's legal actions.
        next_mask = traj.info.get("final_action_mask", traj.info.get("action_mask"))
        targets = q_lambda_returns(traj.reward * hp.reward_scale, masked_max(next_q, next_mask),
                                   traj.terminated, traj.truncated, hp.gamma, hp.q_lambda,
                                   traj.info.get("turn_sign"))
        batch = {"obs": traj.observation, "action": traj.action, "target": targets}
        batch = jax.tree.map(lambda x: x.reshape(config.batch_size, *x.shape[2:]), batch)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(grad_fn, optimizer(hp), ts_.params,
                                                ts_.opt_state, batch, k_perm, n_ep, n_mb)
        metrics["epsilon"] = eps
        extras = carry.extras
        if pool_games:
            extras, pool_metrics = pool_epilogue(carry.extras, params, ts_.step,
                                                 config.pool_every, traj, pool_games)
            metrics.update(pool_metrics)
        return next_carry(carry, params, opt_state, (env_state, timestep, key), extras, traj,
                          metrics)

    return Algorithm(init, update, num_updates, config.batch_size, agent_fn(venv), policy)


def make_train(env: Any, config: PQNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
