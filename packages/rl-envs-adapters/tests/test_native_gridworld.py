"""native/GridWorld: the port's contract, its dynamics by hand, and its options."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset, Discrete, check_environment


def test_gridworld_is_registered_and_keeps_the_contract() -> None:
    assert "native/GridWorld" in rl_envs.list_envs()
    assert rl_envs.backend_installed("native")  # built in: no library to install
    assert rl_envs.family("native/GridWorld") == "tabular"
    env = rl_envs.make("native/GridWorld")
    assert env.observation_space == Discrete(25) and env.action_space == Discrete(4)
    check_environment(env)
    check_environment(rl_envs.make("native/GridWorld", rows=3, cols=7, max_steps=5))


def test_gridworld_dynamics_by_hand() -> None:
    env = rl_envs.make("native/GridWorld")  # 5 x 5, goal = cell 24 (bottom-right)
    state, ts = env.reset(jax.random.PRNGKey(0))
    state = state._replace(cell=jnp.int32(0))
    key = jax.random.PRNGKey(1)
    # Up and left from the top-left corner hit the wall: stay in cell 0, reward -1.
    for a in (0, 3):
        s, t = env.step(state, jnp.int32(a), key)
        assert int(t.observation) == 0 and float(t.reward) == -1.0 and int(s.time) == 1
    s, t = env.step(state, jnp.int32(1), key)  # right
    assert int(t.observation) == 1
    s, t = env.step(state, jnp.int32(2), key)  # down
    assert int(t.observation) == 5
    # From cell 23 (row 4, col 3) moving right reaches the goal: terminated, not truncated.
    s, t = env.step(state._replace(cell=jnp.int32(23)), jnp.int32(1), key)
    assert int(t.observation) == 24 and bool(t.terminated) and not bool(t.truncated)
    assert float(t.reward) == -1.0
    # Shortest distances are Manhattan distances to the corner.
    d = env.shortest_distance()
    assert d[0] == 8 and d[24] == 0 and d[19] == 1 and d[23] == 1


def test_gridworld_truncates_at_the_time_limit_and_starts_off_goal() -> None:
    env = rl_envs.make("native/GridWorld", max_steps=3)
    state, _ = env.reset(jax.random.PRNGKey(0))
    state = state._replace(cell=jnp.int32(0))
    key = jax.random.PRNGKey(0)
    flags = []
    for _ in range(3):
        state, t = env.step(state, jnp.int32(0), key)  # up forever: never reaches the goal
        flags.append((bool(t.terminated), bool(t.truncated)))
    assert flags == [(False, False), (False, False), (False, True)]
    # AutoReset keeps the true final cell for bootstrapping.
    auto = AutoReset(env)
    s, t = auto.reset(key)
    s = s._replace(cell=jnp.int32(23))
    s, t = auto.step(s, jnp.int32(1), key)
    assert int(t.info["final_observation"]) == 24 and int(t.observation) != 24
    # Starts are uniform over the 24 non-goal cells.
    cells = jax.vmap(lambda k: env.reset(k)[1].observation)(jax.random.split(key, 4800))
    counts = np.bincount(np.asarray(cells), minlength=25)
    assert counts[24] == 0 and counts[:24].min() > 120


def test_gridworld_bad_options() -> None:
    with pytest.raises(rl_envs.EnvError, match="no parameter 'size'"):
        rl_envs.make("native/GridWorld", size=4)
    with pytest.raises(rl_envs.EnvError, match="rows must be a positive integer"):
        rl_envs.make("native/GridWorld", rows=0)
    with pytest.raises(rl_envs.EnvError, match="start must be a cell of the 5x5 grid"):
        rl_envs.make("native/GridWorld", start="5,0")
    with pytest.raises(rl_envs.EnvError, match="start and goal must be different"):
        rl_envs.make("native/GridWorld", start=24)


def test_gridworld_start_and_goal() -> None:
    # The tabular workload of Pégoud's "Vectorize and Parallelize RL Environments with JAX":
    # 8 x 12, start bottom-right (7, 11), goal top-left (0, 0).
    env = rl_envs.make("native/GridWorld", rows=8, cols=12, start="7,11", goal=(0, 0))
    check_environment(env)
    assert env.start == 95 and env.goal == 0 and "start=(7, 11)" in repr(env)
    keys = jax.random.split(jax.random.PRNGKey(1), 50)
    cells = jax.vmap(lambda k: env.reset(k)[1].observation)(keys)
    assert np.all(np.asarray(cells) == 95)
    d = env.shortest_distance()
    assert d[0] == 0 and d[95] == 18 and d[1] == 1 and d[12] == 1
    state, _ = env.reset(keys[0])
    state, t = env.step(state._replace(cell=jnp.int32(1)), jnp.int32(3), keys[0])  # left
    assert int(t.observation) == 0 and bool(t.terminated)
    # A goal inside the grid: random starts cover every other cell and never the goal.
    mid = rl_envs.make("native/GridWorld", rows=3, cols=3, goal=4)
    cells = jax.vmap(lambda k: mid.reset(k)[1].observation)(jax.random.split(keys[0], 2000))
    counts = np.bincount(np.asarray(cells), minlength=9)
    assert counts[4] == 0 and counts[[0, 1, 2, 3, 5, 6, 7, 8]].min() > 180
