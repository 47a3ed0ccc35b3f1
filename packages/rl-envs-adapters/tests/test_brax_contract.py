"""brax ids keep the port's contract. Two cheap ones in the default run, one per pipeline:
inverted_double_pendulum (spring) here, inverted_pendulum (generalized) in the fast subset of
tests/test_all_envs_contract.py; every registered brax id (each compiles its physics, 10 s to
minutes on a CPU) under `-m slow`."""

from __future__ import annotations

import pytest

import rl_envs
from rl_core import Box, check_environment
from rl_envs import brax_adapter

ALL_IDS = rl_envs.list_envs("brax")


def test_every_registered_brax_env_is_listed() -> None:
    import brax.envs

    registered = set(brax.envs._envs)
    assert set(brax_adapter.ENV_NAMES) | set(brax_adapter.EXCLUDED) == registered
    assert ALL_IDS == [f"brax/{n}" for n in brax_adapter.ENV_NAMES]
    assert "brax/inverted_pendulum" in ALL_IDS and "brax/hopper" in ALL_IDS


@pytest.mark.parametrize(("env_id", "backend"), [("brax/inverted_pendulum", "generalized"),
                                                 ("brax/inverted_double_pendulum", "spring")])
def test_each_pipeline_has_a_cheap_id(env_id: str, backend: str) -> None:
    env = rl_envs.make(env_id)
    assert env.env_id == env_id and env.backend == backend


def test_check_environment_spring() -> None:
    check_environment(rl_envs.make("brax/inverted_double_pendulum"))


def test_spaces() -> None:
    env = rl_envs.make("brax/inverted_pendulum")
    obs, act = env.observation_space, env.action_space
    assert isinstance(obs, Box) and obs.shape == (4,) and not obs.bounded
    assert isinstance(act, Box) and act.shape == (1,)
    assert act.low.tolist() == [-1.0] and act.high.tolist() == [1.0]
    assert rl_envs.make("brax/reacher").action_space.shape == (2,)
    assert rl_envs.family("brax/hopper") == "brax"


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_environment_every_id(env_id: str) -> None:
    check_environment(rl_envs.make(env_id))
