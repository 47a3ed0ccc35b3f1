"""PPO's static config and traced hyperparameters, and the algorithm registry."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import rl_algos
from rl_algos import ALGORITHMS, ConfigError
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams
from rl_core import Box, Discrete, MultiDiscrete


def test_default_config_is_valid_and_derived_sizes() -> None:
    cfg = PPOConfig()
    cfg.validate()
    assert cfg.batch_size == 512  # 4 envs * 128 steps
    assert cfg.minibatch_size == 128  # 512 / 4
    assert cfg.num_updates == 976  # 500_000 // 512
    PPOHParams().validate()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        # 4 * 10 = 40 is not divisible by 3
        (dict(num_envs=4, num_steps=10, num_minibatches=3), "num_minibatches=3 must divide"),
        (dict(num_envs=0), "num_envs must be >= 1"),
        (dict(num_steps=0), "num_steps must be >= 1"),
        (dict(num_epochs=0), "num_epochs must be >= 1"),
        (dict(num_minibatches=0), "num_minibatches must be >= 1"),
        # one batch is 4 * 128 = 512 steps
        (dict(total_timesteps=511), "less than one update"),
        (dict(activation="sigmoid"), "activation must be one of"),
        (dict(hidden_sizes=(64, 0)), "hidden_sizes must be positive"),
    ],
)
def test_invalid_config(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        PPOConfig(**kwargs).validate()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(lr=0.0), "lr must be > 0"),
        (dict(gamma=1.5), "gamma must be in"),
        (dict(gae_lambda=-0.1), "gae_lambda must be in"),
        (dict(clip_eps=0.0), "clip_eps must be > 0"),
        (dict(ent_coef=-1.0), "ent_coef must be >= 0"),
        (dict(vf_coef=-1.0), "vf_coef must be >= 0"),
        (dict(max_grad_norm=0.0), "max_grad_norm must be > 0"),
    ],
)
def test_invalid_hparams(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        PPOHParams(**kwargs).validate()


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_presets_are_valid(name) -> None:
    """Every preset of every registered algorithm builds a valid config and hyperparameters."""
    spec = ALGORITHMS[name]
    for preset in spec.presets.values():
        spec.config_cls(**preset.config).validate()
        spec.default_hparams()._replace(**preset.hparams).validate()


def test_hparams_as_arrays() -> None:
    hp = hparams_as_arrays(PPOHParams(lr=1e-3))
    assert isinstance(hp, PPOHParams)
    for v in hp:
        assert isinstance(v, jnp.ndarray) and v.dtype == jnp.float32 and v.shape == ()
    assert float(hp.lr) == pytest.approx(1e-3)
    assert float(hp.gamma) == pytest.approx(0.99)


def test_registry() -> None:
    spec = rl_algos.get("ppo")
    assert spec.config_cls is PPOConfig and spec.hparams_cls is PPOHParams
    with pytest.raises(ConfigError, match="Did you mean 'ppo'"):
        rl_algos.get("ppx")

    class Env:
        action_space = Box(-1.0, 1.0, (2,))
        observation_space = Box(-1.0, 1.0, (3,))

    spec.check_env(Env())  # PPO takes Discrete, MultiDiscrete and Box actions
    assert spec.default_preset("classic_control", Box(-1.0, 1.0, (2,))) == "continuous_control"
    assert spec.default_preset("minatar", Discrete(3)) == "minatar"
    assert spec.default_preset("bsuite", MultiDiscrete((2,))) is None

    class WeirdEnv:
        action_space = "text"

    with pytest.raises(ConfigError, match="ppo supports"):
        spec.check_env(WeirdEnv())

    class TabularEnv:
        action_space = Discrete(4)
        observation_space = Discrete(25)

    with pytest.raises(ConfigError, match="ppo learns from Box observations"):
        spec.check_env(TabularEnv())
    rl_algos.get("qlearning").check_env(TabularEnv())
