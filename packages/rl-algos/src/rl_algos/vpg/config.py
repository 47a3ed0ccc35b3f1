"""VPG configuration: static structure, traced hyperparameters, and presets per env family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rl_algos.common.config import require
from rl_algos.common.networks import ACTIVATIONS


@dataclass(frozen=True)
class VPGConfig:
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 1_000_000
    num_envs: int = 8
    num_steps: int = 64  # rollout length per environment per update (one policy step each)
    num_value_epochs: int = 5  # passes of value regression over the batch per update
    num_value_minibatches: int = 1  # 1: full-batch value steps, as SpinningUp
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    normalize_advantages: bool = True
    normalize_observations: bool = False
    normalize_rewards: bool = False

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def value_minibatch_size(self) -> int:
        return self.batch_size // self.num_value_minibatches

    @property
    def num_updates(self) -> int:
        return self.total_timesteps // self.batch_size

    def validate(self) -> None:
        for name in ("num_envs", "num_steps", "num_value_epochs", "num_value_minibatches"):
            require(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        require(
            self.batch_size % self.num_value_minibatches == 0,
            f"num_value_minibatches={self.num_value_minibatches} must divide the batch "
            f"num_envs*num_steps={self.batch_size}; pick a divisor of {self.batch_size}",
        )
        require(
            self.total_timesteps >= self.batch_size,
            f"total_timesteps={self.total_timesteps} is less than one batch "
            f"(num_envs*num_steps={self.batch_size}); raise it or shrink the batch",
        )
        require(self.activation in ACTIVATIONS,
                f"activation must be one of {sorted(ACTIVATIONS)}, got '{self.activation}'")
        require(all(h >= 1 for h in self.hidden_sizes),
                f"hidden_sizes must be positive, got {self.hidden_sizes}")


class VPGHParams(NamedTuple):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    pi_lr: float = 1e-3
    vf_lr: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.97
    ent_coef: float = 0.0
    max_grad_norm: float = 0.5

    def validate(self) -> None:
        require(self.pi_lr > 0, f"pi_lr must be > 0, got {self.pi_lr}")
        require(self.vf_lr > 0, f"vf_lr must be > 0, got {self.vf_lr}")
        require(0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}")
        require(0 <= self.gae_lambda <= 1, f"gae_lambda must be in [0, 1], got {self.gae_lambda}")
        require(self.ent_coef >= 0, f"ent_coef must be >= 0, got {self.ent_coef}")
        require(self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}")


# Defaults per environment family: (static overrides, hparam overrides).
PRESETS: dict[str, tuple[dict, dict]] = {
    "classic_control": ({}, {}),
    "minatar": (
        dict(total_timesteps=5_000_000, num_envs=64, num_steps=32, activation="relu"),
        dict(pi_lr=5e-4, ent_coef=0.01),
    ),
    "continuous_control": (
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=128, num_value_epochs=10,
             num_value_minibatches=8, normalize_observations=True, normalize_rewards=True),
        dict(pi_lr=3e-4, gamma=0.95),
    ),
}
