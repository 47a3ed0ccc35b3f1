"""Id resolution and user-facing errors of rl_envs."""

from __future__ import annotations

import pytest

import rl_envs
from rl_core import Box, Discrete


def test_unknown_id_suggests_the_close_one() -> None:
    with pytest.raises(rl_envs.UnknownEnvironmentError) as exc:
        rl_envs.make("gymnax/CartPol-v1")
    assert "'gymnax/CartPole-v1'" in str(exc.value)
    assert "Did you mean" in str(exc.value)


def test_unknown_id_without_prefix_suggests_the_prefixed_one() -> None:
    with pytest.raises(rl_envs.UnknownEnvironmentError, match="'gymnax/Breakout-MinAtar'"):
        rl_envs.make("Breakout-MinAtar")


def test_unknown_backend_prefix() -> None:
    with pytest.raises(rl_envs.UnknownEnvironmentError, match="unknown environment 'nobackend/x'"):
        rl_envs.make("nobackend/x")


def test_unknown_id_errors_are_env_errors_and_value_errors() -> None:
    assert issubclass(rl_envs.UnknownEnvironmentError, rl_envs.EnvError)
    assert issubclass(rl_envs.MissingBackendError, rl_envs.EnvError)
    assert issubclass(rl_envs.EnvError, ValueError)


def test_unknown_env_kwarg() -> None:
    with pytest.raises(rl_envs.EnvError, match="no parameter 'max_step'") as exc:
        rl_envs.make("gymnax/CartPole-v1", max_step=5)
    # ... and lists what it accepts.
    assert "max_steps_in_episode" in str(exc.value)


def test_known_env_kwarg_is_applied() -> None:
    env = rl_envs.make("gymnax/CartPole-v1", max_steps_in_episode=7)
    assert env.params.max_steps_in_episode == 7


def test_list_envs() -> None:
    ids = rl_envs.list_envs()
    installed = [b for b in rl_envs.backends() if rl_envs.backend_installed(b)]
    assert {"gymnax", "brax", "jumanji", "pgx", "native"} <= set(installed)
    assert ids == [i for b in installed for i in rl_envs.list_envs(b)]
    assert len(ids) == len(set(ids))
    assert all(i.split("/", 1)[0] in installed for i in ids)
    assert "gymnax/CartPole-v1" in ids and "native/GridWorld" in ids
    assert set(ids) <= set(rl_envs.all_ids())
    with pytest.raises(rl_envs.UnknownEnvironmentError, match="unknown backend 'nope'"):
        rl_envs.list_envs("nope")


def test_family() -> None:
    assert rl_envs.family("gymnax/CartPole-v1") == "classic_control"
    assert rl_envs.family("gymnax/Breakout-MinAtar") == "minatar"
    assert rl_envs.family("gymnax/Catch-bsuite") == "bsuite"


def test_spaces_are_converted() -> None:
    cartpole = rl_envs.make("gymnax/CartPole-v1")
    assert cartpole.action_space == Discrete(2)
    assert isinstance(cartpole.observation_space, Box)
    assert cartpole.observation_space.shape == (4,)
    pendulum = rl_envs.make("gymnax/Pendulum-v1")
    assert isinstance(pendulum.action_space, Box) and pendulum.action_space.shape == (1,)
    # Pendulum's torque is bounded by [-2, 2].
    assert float(pendulum.action_space.low[0]) == -2.0
    assert float(pendulum.action_space.high[0]) == 2.0
    breakout = rl_envs.make("gymnax/Breakout-MinAtar")
    # MinAtar's bool planes become a float32 Box of the real observation's shape.
    assert breakout.observation_space.shape == (10, 10, 4)


def test_obs_keep_masks_the_observation_of_any_backend() -> None:
    import jax
    import numpy as np
    import pytest

    import rl_envs
    from rl_core import MaskObservation, check_environment

    full = rl_envs.make("gymnax/CartPole-v1")
    env = rl_envs.make("gymnax/CartPole-v1", obs_keep="0,2")
    assert isinstance(env, MaskObservation) and env.keep == (0, 2)
    assert env.observation_space.shape == (2,) and env.env_id == "gymnax/CartPole-v1"
    np.testing.assert_array_equal(env.observation_space.high, full.observation_space.high[[0, 2]])
    key = jax.random.PRNGKey(0)
    np.testing.assert_array_equal(env.reset(key)[1].observation,
                                  full.reset(key)[1].observation[np.array([0, 2])])
    check_environment(env)
    assert rl_envs.make("gymnax/CartPole-v1", obs_keep=3).observation_space.shape == (1,)
    with pytest.raises(rl_envs.EnvError, match="obs_keep"):
        rl_envs.make("gymnax/CartPole-v1", obs_keep="0,4")
    with pytest.raises(rl_envs.EnvError, match="obs_keep"):
        rl_envs.make("gymnax/CartPole-v1", obs_keep="x")
