"""The carry a training run starts from (`initial_carry`, for the algorithms with one network)
and the end of every algorithm's update (`next_carry`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.envs import episode_metrics
from rl_core import RunnerState, TrainState


def initial_carry(key: jax.Array, make_model: Callable[[jax.Array], Any], venv: Any,
                  init_opt: Callable[[Any], Any], extras: Callable[[Any], Any] = lambda p: None,
                  data_axis: Any = None) -> RunnerState:
    """A `RunnerState` at update 0: `key` split into the model's, the environments' and the run's
    keys; the model's array leaves as parameters, `init_opt(params)` as the optimiser state, the
    vectorised environment `venv` reset, and `extras(params)` as the algorithm's own carry (a
    target network and a replay buffer, a recurrent state). Under data parallelism
    (`data_axis`) the environments' and the run's keys are folded with the device's index:
    the same model everywhere, different environments and actions."""
    k_model, k_env, k_run = jax.random.split(key, 3)
    if data_axis is not None:
        index = jax.lax.axis_index(data_axis.name)
        k_env, k_run = jax.random.fold_in(k_env, index), jax.random.fold_in(k_run, index)
    params = eqx.filter(make_model(k_model), eqx.is_array)
    env_state, ts = venv.reset(k_env)
    train_state = TrainState(params, init_opt(params), jnp.zeros((), jnp.int32))
    return RunnerState(train_state, env_state, ts, k_run, extras(params))


def next_carry(carry: RunnerState, params: Any, opt_state: Any, rolled: tuple[Any, Any, Any],
               extras: Any, traj: Any, metrics: dict[str, jax.Array],
               data_axis: Any = None) -> tuple[RunnerState, dict[str, jax.Array]]:
    """The end of every update: the carry one update on (the new parameters and optimiser state,
    `rolled` = the rollout's final `(env_state, timestep, key)`, the algorithm's `extras`) and the
    update's `metrics` with the rollout's `EPISODE_METRICS` added (summed over the devices of
    `data_axis`, whose environments are each a share of one agent's)."""
    episodes = episode_metrics(traj.info, traj.terminated, traj.truncated)
    if data_axis is not None:
        episodes = jax.lax.psum(episodes, data_axis.name)
    train_state = TrainState(params, opt_state, carry.train_state.step + 1)
    return RunnerState(train_state, *rolled, extras), {**metrics, **episodes}
