"""A user's own environment: `module:factory` ids, the generic gymnax-interface adapter, and the
backends installed packages register through the `jaxrlkit.envs` entry point (the example
package examples/maze is installed in the workspace and registers `mylab`)."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import Box, Discrete, check_environment
from rl_envs import _registry

CARTPOLE = "gymnax.environments.classic_control:CartPole"


def _rollout(env, steps: int = 300):
    """Every TimeStep of `steps` steps of fixed random actions from one key."""

    @jax.jit
    def run(key):
        state, ts = env.reset(key)

        def body(carry, k):
            state, _ = carry
            k_a, k_s = jax.random.split(k)
            state, ts = env.step(state, jax.random.randint(k_a, (), 0, 2), k_s)
            return (state, ts), ts

        return jax.lax.scan(body, (state, ts), jax.random.split(key, steps))[1]

    return run(jax.random.PRNGKey(7))


def test_a_gymnax_environment_by_import_path_is_the_built_in_one_bitwise() -> None:
    """The generic gymnax-interface adapter and the gymnax adapter are one code path: gymnax's
    CartPole class named by import path steps exactly as `gymnax/CartPole-v1` (time limit a
    truncation, not a termination)."""
    mine, theirs = rl_envs.make(CARTPOLE), rl_envs.make("gymnax/CartPole-v1")
    assert repr(mine.observation_space) == repr(theirs.observation_space)
    assert np.array_equal(mine.observation_space.high, theirs.observation_space.high)
    assert mine.action_space == theirs.action_space == Discrete(2)
    a, b = _rollout(mine), _rollout(theirs)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    assert bool(a.terminated.any())
    short = rl_envs.make(CARTPOLE)._env, rl_envs.make("gymnax/CartPole-v1").params.replace(
        max_steps_in_episode=5)
    env = rl_envs.custom.as_port(short, "pair")
    ts = _rollout(env, 6)
    assert bool(ts.truncated[4]) and not bool(ts.terminated[4])


def test_a_factory_gets_the_env_args_and_a_family() -> None:
    env = rl_envs.make("rl_example_maze.maze:Maze", max_steps=7)
    assert env.max_steps == 7 and env.action_space == Discrete(4)
    assert rl_envs.family("rl_example_maze.maze:Maze") == "custom"
    assert rl_envs.family(CARTPOLE) == rl_envs.CUSTOM_FAMILY
    assert rl_envs.against("rl_example_maze.maze:Maze", {}, None) is None
    masked = rl_envs.make("rl_example_maze.maze:Maze", obs_keep="0,1")
    assert masked.observation_space.shape == (2,)


def test_the_example_package_registers_its_backend() -> None:
    assert rl_envs.backends()["mylab"].plugin == "rl-example-maze"
    assert "mylab/Maze-v0" in rl_envs.list_envs() and "mylab/Maze-v0" in rl_envs.all_ids()
    assert rl_envs.family("mylab/Maze-v0") == "custom"
    env = rl_envs.make("mylab/Maze-v0", max_steps=9)
    check_environment(env)
    state, ts = env.reset(jax.random.PRNGKey(0))
    assert ts.info["action_mask"].tolist() == [False, True, True, False]  # the corner start
    with pytest.raises(rl_envs.EnvError, match="does not take the parameter"):
        rl_envs.make("mylab/Maze-v0", size=3)


def test_the_maze_truncates_at_its_time_limit_and_terminates_at_the_goal() -> None:
    env = rl_envs.make("mylab/Maze-v0", max_steps=3)
    state, ts = env.reset(jax.random.PRNGKey(0))
    for _ in range(3):  # down, up, down: never the goal
        state, ts = env.step(state, jnp.asarray(2 if int(state.time) % 2 == 0 else 0),
                             jax.random.PRNGKey(0))
    assert bool(ts.truncated) and not bool(ts.terminated) and float(ts.reward) == 0.0
    env = rl_envs.make("mylab/Maze-v0", layout="SG")
    state, ts = env.reset(jax.random.PRNGKey(0))
    state, ts = env.step(state, jnp.asarray(1), jax.random.PRNGKey(0))
    assert bool(ts.terminated) and not bool(ts.truncated) and float(ts.reward) == 1.0


class _NoTruncation:
    """gymnax's interface before 1.0: no `is_truncated`, its time limit inside `done`."""

    def __init__(self):
        self._env, self.default_params = rl_envs.make(CARTPOLE)._env, None
        self.default_params = rl_envs.make(CARTPOLE).params.replace(max_steps_in_episode=4)

    def reset_env(self, key, params):
        return self._env.reset_env(key, params)

    def step_env(self, key, state, action, params):
        obs, state, reward, done, info = self._env.step_env(key, state, action, params)
        done = jnp.logical_or(done, self._env.is_truncated(state, params))
        return obs, state, reward, done, info

    def observation_space(self, params):
        return self._env.observation_space(params)

    def action_space(self, params):
        return self._env.action_space(params)


def test_without_is_truncated_every_end_is_a_termination() -> None:
    env = rl_envs.custom.as_port(_NoTruncation(), "old gymnax")
    assert isinstance(env.observation_space, Box)
    ts = _rollout(env, 4)
    assert bool(ts.terminated[3]) and not bool(ts.truncated.any())


def test_a_broken_factory_is_one_line_each(tmp_path: Path, monkeypatch) -> None:
    """Each way a user's module can fail is an EnvError of one line naming the fix (the CLI's
    versions are in rl-cli's hostile-input table)."""
    (tmp_path / "lab_envs.py").write_text(
        "import jax.numpy as jnp\n"
        "from rl_example_maze.maze import Maze\n"
        "VALUE = 1\n"
        "def boom(): raise KeyError('level')\n"
        "def nothing(): return None\n"
        "class Impure(Maze):\n"
        "    def reset(self, key):\n"
        "        state, ts = super().reset(key)\n"
        "        return state, ts._replace(observation=ts.observation * 2)\n"
        "import dataclasses\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Frozen:\n"
        "    maze: Maze = dataclasses.field(default_factory=Maze)\n"
        "    observation_space = property(lambda self: self.maze.observation_space)\n"
        "    action_space = property(lambda self: self.maze.action_space)\n"
        "    def reset(self, key): return self.maze.reset(key)\n"
        "    def step(self, state, action, key): return self.maze.step(state, action, key)\n"
        "def gymnax_without_params():\n"
        "    import gymnax\n"
        "    env, _ = gymnax.make('CartPole-v1')\n"
        "    class Bare:\n"
        "        reset_env, step_env = env.reset_env, env.step_env\n"
        "        observation_space, action_space = env.observation_space, env.action_space\n"
        "    return Bare()\n")
    (tmp_path / "broken_import.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)  # the current folder is searched, as `python -c` does
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    cases = {
        "lab_envs:boom": "the factory raised KeyError: 'level'",
        "lab_envs:nothing": "returned a NoneType, which lacks reset",
        "lab_envs:VALUE": "not a callable",
        "lab_envs:missing": "lab_envs has no 'missing'; its callables are Frozen, Impure, Maze,",
        "lab_envs:Impure": "breaks the environment port: reset: observation outside",
        "lab_envs:gymnax_without_params": "without `default_params`",
        "broken_import:f": "importing broken_import failed: No module named "
                           "'no_such_dependency_xyz'",
    }
    for path, hint in cases.items():
        with pytest.raises(rl_envs.EnvError) as e:
            rl_envs.make(path)
        assert hint in str(e.value), (path, str(e.value))
        assert "\n" not in str(e.value)
    # a frozen environment (a frozen dataclass, an equinox module) is taken as it is
    assert rl_envs.make("lab_envs:Frozen").action_space == Discrete(4)
    with pytest.raises(rl_envs.EnvError, match="lab_envs:Frozen has no 'nope'"):
        rl_envs.make("lab_envs:Frozen.nope")


def test_a_clashing_or_badly_named_entry_point_is_left_out(tmp_path: Path, monkeypatch) -> None:
    """An installed package (here a dist-info folder on the path, as pip leaves one) that
    registers a built-in prefix or a name that is no prefix is skipped with a warning; its
    good entry point is kept."""

    def ids():
        with pytest.warns(UserWarning):
            return rl_envs.all_ids()

    info = tmp_path / "lab_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[jaxrlkit.envs]\ngymnax = rl_example_maze\nBad/Name = rl_example_maze\n"
        "lab = rl_example_maze\nbroken = no_such_module_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _registry._plugins.cache_clear()
    try:
        with pytest.warns(UserWarning, match="lab-plugin registers the environment prefix"):
            found = rl_envs.backends()
        assert found["gymnax"].plugin is None and "Bad/Name" not in found
        assert found["lab"].plugin == "lab-plugin"
        assert rl_envs.list_envs("lab") == ["lab/Maze-v0"]
        # a package whose module does not import hides only its own environments
        with pytest.warns(UserWarning, match="the 'broken' environments of lab-plugin"):
            assert "lab/Maze-v0" in rl_envs.list_envs() and "gymnax/CartPole-v1" in ids()
        with pytest.raises(rl_envs.EnvError, match="no module named 'no_such_module_xyz'"):
            rl_envs.make("broken/Maze-v0")
    finally:
        _registry._plugins.cache_clear()
