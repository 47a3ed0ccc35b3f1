"""IPPO's `overcooked` preset trains on Overcooked's shaping reward annealed over JaxMARL's
horizon (2.5e6 environment steps), counted in steps of the training stack (16 environments a
step); no shaping where the horizon is 0."""

from __future__ import annotations

import pytest

import rl_algos
import rl_envs
from rl_algos.common.policy import actor_critic_setup
from rl_core import AnnealedRewardShaping

pytest.importorskip("jaxmarl")


def _shaping(venv):
    """The stack's `AnnealedRewardShaping`, or None."""
    while venv is not None and not isinstance(venv, AnnealedRewardShaping):
        venv = getattr(venv, "env", None)
    return venv


def test_the_overcooked_preset_anneals_the_shaping_over_its_horizon_in_stack_steps() -> None:
    spec = rl_algos.get("ippo")
    static, _, _ = spec.presets["overcooked"]
    env = rl_envs.make("jaxmarl/Overcooked_cramped_room")
    config = spec.config_cls(**static)
    assert config.reward_shaping_horizon == 2_500_000 and config.num_envs == 16
    shaping = _shaping(actor_critic_setup(env, config, config.num_envs).venv)
    assert shaping is not None and shaping.horizon == 2_500_000 / 16
    plain = spec.config_cls(**{**static, "reward_shaping_horizon": 0})
    assert _shaping(actor_critic_setup(env, plain, plain.num_envs).venv) is None
