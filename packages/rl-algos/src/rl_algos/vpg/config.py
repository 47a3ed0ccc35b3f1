"""VPG configuration: static structure, traced hyperparameters, and presets per env family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.actor_critic import ActorCriticConfig
from rl_algos.common.config import (
    HParamsBase,
    check_divides,
    check_ranges,
    hparams,
    require_positive,
)
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class VPGConfig(ActorCriticConfig):
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 1_000_000
    num_envs: int = 8
    num_steps: int = 64  # rollout length per environment per update (one policy step each)
    num_value_epochs: int = 5  # passes of value regression over the batch per update
    num_value_minibatches: int = 1  # 1: full-batch value steps, as SpinningUp

    def validate(self) -> None:
        super().validate()
        require_positive(self, "num_value_epochs", "num_value_minibatches")
        check_divides(self.batch_size, self.num_value_minibatches, "num_value_minibatches")


@hparams
class VPGHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    pi_lr: float = 1e-3
    vf_lr: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.97
    ent_coef: float = 0.0
    max_grad_norm: float = 0.5

    def validate(self) -> None:
        check_ranges(self, positive=("pi_lr", "vf_lr", "max_grad_norm"),
                     non_negative=("ent_coef",), unit=("gamma", "gae_lambda"))


# Defaults per environment family: `Preset`s (static, traced overrides).
PRESETS: dict[str, Preset] = {
    "classic_control": Preset(),
    "minatar": Preset(
        dict(total_timesteps=5_000_000, num_envs=64, num_steps=32, activation="relu"),
        dict(pi_lr=5e-4, ent_coef=0.01),
    ),
    "continuous_control": Preset(
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=128, num_value_epochs=10,
             num_value_minibatches=8, normalize_observations=True, normalize_rewards=True),
        dict(pi_lr=3e-4, gamma=0.95),
    ),
}
