"""PQN-VDN's training program: PQN's update on the agents batched, the loss and the Q(λ)
targets on the team's summed values."""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.policy import agent_fn
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
from rl_algos.pqn.train import q_network_model
from rl_algos.pqn_vdn.config import PQNVDNConfig
from rl_core import Algorithm, Policy, RunnerState, rollout


def make_policy(env: Any, config: PQNVDNConfig) -> Policy:
    """Each agent's ε-greedy acting on its own observation, with PQN's Q-network."""
    check_spaces(env, "pqn_vdn")
    return q_policy(q_network_model(env, config))


def team_targets(reward: jax.Array, next_max: jax.Array, terminated: jax.Array,
                 episode_over: jax.Array, hp: Any, team_reward: str = "sum") -> jax.Array:
    """The team's Q(λ) targets `[T, N]` from per-agent leaves `[T, N, A]` (`episode_over`
    `[T, N]`): the agents' rewards summed (or averaged, `team_reward="mean"`: a shared reward
    handed to every agent) and scaled by `hp.reward_scale`, next value the sum of
    the agents' max Q over their legal actions, an agent terminated at the step adding nothing;
    the team terminates when every agent has, and bootstraps (truncated) when its episode ends
    otherwise."""
    team_terminated = jnp.all(terminated, axis=-1)
    next_value = jnp.sum(jnp.where(terminated, 0.0, next_max), axis=-1)
    team = jnp.mean(reward, axis=-1) if team_reward == "mean" else jnp.sum(reward, axis=-1)
    return q_lambda_returns(team * hp.reward_scale, next_value,
                            team_terminated, episode_over & ~team_terminated, hp.gamma,
                            hp.q_lambda)


def acting(prev_terminated: jax.Array, prev_over: jax.Array, terminated: jax.Array,
           over: jax.Array) -> jax.Array:
    """bool `[T, ...]`: the agents that act in each step of a rollout (are not out): not
    terminated at the step before, unless that step ended the episode (the next one starts with
    every agent in). `terminated`/`over` `[T, ...]` are the rollout's flags after each step,
    `prev_*` `[...]` those of the step before the rollout."""
    before = jnp.concatenate([prev_terminated[None], terminated[:-1]])
    ended = jnp.concatenate([prev_over[None], over[:-1]])
    return ~before | ended


def team_q(q: jax.Array, action: jax.Array, acts: jax.Array) -> jax.Array:
    """Q_tot `[B]` = Σ_a Q(o_a, u_a) over the agents that act, from `q [B, A, U]`, `action [B, A]`
    and `acts` bool `[B, A]` (an agent that is out adds nothing, as in `team_targets`)."""
    taken = jnp.take_along_axis(q, action[..., None], axis=-1)[..., 0]
    return jnp.sum(jnp.where(acts, taken, 0.0), axis=-1)


def make_algorithm(env: Any, config: PQNVDNConfig) -> Algorithm:
    """PQN-VDN on `env` (one unbatched environment of the multi-agent port, Discrete actions)."""
    config.validate()
    check_spaces(env, "pqn_vdn")
    a, n, t = int(env.num_agents), config.num_envs, config.num_steps
    venv, make_model, policy, q_values, act = q_agent(env, q_network_model(env, config), n)
    num_updates, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs
    optimizer = annealed_optimizer(config, kind="radam")

    def per_env(x: jax.Array) -> jax.Array:
        """`[T, N * A, ...]` (the agents batched, environment-major) -> `[T, N, A, ...]`."""
        return x.reshape(t, n, a, *x.shape[2:])

    def init(key: jax.Array, hp: Any) -> RunnerState:
        return initial_carry(key, make_model, venv, optimizer(hp).init)

    def loss_fn(params: Any, mb: Any):
        """`mb`: `obs [B, A, ...]`, `action [B, A]`, `acts [B, A]`, `target [B]` (B team
        transitions)."""
        q = q_values(params, mb["obs"].reshape(-1, *mb["obs"].shape[2:]))
        return q_loss(team_q(q.reshape(-1, a, q.shape[-1]), mb["action"], mb["acts"]),
                      mb["target"], None)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        eps = epsilon_at(ts_.step, num_updates, hp)
        (env_state, timestep, key), traj = rollout(venv, partial(act, ts_.params, eps),
                                                   carry.env_state, carry.timestep, carry.key, t)
        next_q = jax.vmap(partial(q_values, ts_.params))(traj.next_observation)  # [T, N*A, U]
        next_mask = traj.info.get("final_action_mask", traj.info.get("action_mask"))
        targets = team_targets(per_env(traj.reward), per_env(masked_max(next_q, next_mask)),
                               per_env(traj.terminated), per_env(traj.info["episode_over"])[..., 0],
                               hp, config.team_reward)
        acts = acting(carry.timestep.terminated, carry.timestep.info["episode_over"],
                      traj.terminated, traj.info["episode_over"])
        batch = {"obs": per_env(traj.observation), "action": per_env(traj.action),
                 "acts": per_env(acts), "target": targets}
        batch = jax.tree.map(lambda x: x.reshape(t * n, *x.shape[2:]), batch)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(grad_fn, optimizer(hp), ts_.params,
                                                ts_.opt_state, batch, k_perm, n_ep, n_mb)
        metrics["epsilon"] = eps
        return next_carry(carry, params, opt_state, (env_state, timestep, key), carry.extras,
                          traj, metrics)

    return Algorithm(init, update, num_updates, n * t, agent_fn(venv), policy)
