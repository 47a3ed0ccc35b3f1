"""The jumanji adapter: which ids exist, how episode ends, spaces, masks and structured
observations map onto the port (see rl_envs/jumanji_adapter.py's docstring)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import Box, Discrete, MultiDiscrete
from rl_envs import jumanji_adapter

jumanji = pytest.importorskip("jumanji")
KEY = jax.random.PRNGKey(0)


def test_every_registered_env_is_listed_or_excluded_with_a_reason() -> None:
    registered = set(jumanji.registered_environments())
    listed, excluded = set(jumanji_adapter.ENV_NAMES), set(jumanji_adapter.EXCLUDED)
    assert listed | excluded == registered and not listed & excluded
    assert "Sokoban-v0" in excluded and all(len(r) > 20 for r in jumanji_adapter.EXCLUDED.values())
    assert rl_envs.list_envs("jumanji") == [f"jumanji/{n}" for n in jumanji_adapter.ENV_NAMES]
    assert rl_envs.family("jumanji/Snake-v1") == "jumanji_snake"
    assert rl_envs.family("jumanji/Game2048-v1") == "jumanji"


def test_snake_spaces_mask_and_unflattened_grid() -> None:
    env = rl_envs.make("jumanji/Snake-v1")
    # grid 12*12*5 + step_count; the action mask is not part of the observation.
    assert env.observation_space.shape == (721,) and env.action_space == Discrete(4)
    assert env.layout == {"grid": (0, (12, 12, 5)), "step_count": (720, ())}
    assert float(env.observation_space.high[720]) == 3999.0  # DiscreteArray(time_limit)
    _, ts = jax.jit(env.reset)(KEY)
    _, raw = jax.jit(env.unwrapped._env.reset)(KEY)
    np.testing.assert_array_equal(ts.info["action_mask"], raw.observation.action_mask)
    assert ts.info["action_mask"].dtype == jnp.bool_
    grid = env.unflatten(ts.observation)["grid"]  # what a CNN torso asks for
    assert grid.shape == (12, 12, 5)
    np.testing.assert_array_equal(grid, raw.observation.grid)
    structured = rl_envs.make("jumanji/Snake-v1", flatten=False)
    assert set(structured.observation_space) == {"grid", "step_count"}
    _, ts2 = jax.jit(structured.reset)(KEY)
    np.testing.assert_array_equal(ts2.observation["grid"], grid)


def _run_until_done(env, action, max_steps: int):
    step = jax.jit(env.step)
    state, ts = jax.jit(env.reset)(KEY)
    for t in range(1, max_steps + 1):
        state, ts = step(state, action, KEY)
        if bool(ts.terminated) or bool(ts.truncated):
            return t, ts
    raise AssertionError(f"no episode end in {max_steps} steps")


def test_time_limit_reported_as_truncation_is_truncated() -> None:
    # LevelBasedForaging ends its time limit with jumanji's `truncation` (LAST, discount 1).
    env = rl_envs.make("jumanji/LevelBasedForaging-v0", time_limit=3)
    assert isinstance(env.action_space, MultiDiscrete)
    t, ts = _run_until_done(env, jnp.zeros(env.action_space.shape, jnp.int32), 10)  # no-ops
    assert t == 3 and bool(ts.truncated) and not bool(ts.terminated)


def test_termination_is_terminated() -> None:
    # Snake ends with jumanji's `termination` (LAST, discount 0), its time limit included.
    env = rl_envs.make("jumanji/Snake-v1", time_limit=3)
    t, ts = _run_until_done(env, jnp.int32(0), 10)
    assert t <= 3 and bool(ts.terminated) and not bool(ts.truncated)


def test_per_dimension_mask_is_concatenated() -> None:
    env = rl_envs.make("jumanji/Cleaner-v0")  # one row of the mask per agent
    assert env.action_space == MultiDiscrete((4, 4, 4))
    _, ts = jax.jit(env.reset)(KEY)
    _, raw = jax.jit(env.unwrapped._env.reset)(KEY)
    assert ts.info["action_mask"].shape == (12,)
    np.testing.assert_array_equal(ts.info["action_mask"],
                                  np.asarray(raw.observation.action_mask).reshape(-1))


def test_joint_mask_becomes_one_flat_discrete_action() -> None:
    env = rl_envs.make("jumanji/Minesweeper-v0")
    assert env.action_space == Discrete(100)  # (row, col) numbered row-major
    np.testing.assert_array_equal(env.unwrapped._env_action(jnp.int32(37)), [3, 7])
    _, ts = jax.jit(env.reset)(KEY)
    _, raw = jax.jit(env.unwrapped._env.reset)(KEY)
    np.testing.assert_array_equal(ts.info["action_mask"],
                                  np.asarray(raw.observation.action_mask).reshape(-1))


def test_continuous_multi_agent_actions_are_a_flat_box() -> None:
    env = rl_envs.make("jumanji/SearchAndRescue-v0")
    assert isinstance(env.action_space, Box) and env.action_space.shape == (4,)
    assert env.unwrapped._env_action(jnp.arange(4.0)).shape == (2, 2)


def test_unknown_constructor_keyword_is_one_clear_error() -> None:
    with pytest.raises(rl_envs.EnvError, match="jumanji/Snake-v1 does not accept 'num_row'"):
        rl_envs.make("jumanji/Snake-v1", num_row=5)
