"""Tabular Q-learning configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rl_algos.common.config import require


@dataclass(frozen=True)
class QLearningConfig:
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 100_000  # environment steps per agent (all its environments together)
    num_envs: int = 16  # environments each agent steps in lockstep
    num_steps: int = 125  # steps per environment in one update (one `lax.scan`)

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return self.total_timesteps // self.batch_size

    def validate(self) -> None:
        for name in ("num_envs", "num_steps"):
            require(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        require(
            self.total_timesteps >= self.batch_size,
            f"total_timesteps={self.total_timesteps} is less than one update "
            f"(num_envs*num_steps={self.batch_size}); raise it or shrink num_envs/num_steps",
        )


class QLearningHParams(NamedTuple):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 0.5  # step size α
    gamma: float = 0.99
    epsilon: float = 0.1  # probability of a uniformly random action
    q_init: float = 0.0  # initial Q-values (0 is optimistic when rewards are negative)

    def validate(self) -> None:
        require(0 < self.lr <= 1, f"lr must be in (0, 1], got {self.lr}")
        require(0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}")
        require(0 <= self.epsilon <= 1, f"epsilon must be in [0, 1], got {self.epsilon}")


PRESETS: dict[str, tuple[dict, dict]] = {
    "tabular": ({}, {}),
}
