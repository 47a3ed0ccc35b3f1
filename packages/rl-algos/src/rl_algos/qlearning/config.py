"""Tabular Q-learning configuration."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import BatchConfig, HParamsBase, hparams, require
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class QLearningConfig(BatchConfig):
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 100_000  # environment steps per agent (all its environments together)
    num_envs: int = 16  # environments each agent steps in lockstep
    num_steps: int = 125  # steps per environment in one update (one `lax.scan`)


@hparams
class QLearningHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 0.5  # step size α
    gamma: float = 0.99
    epsilon: float = 0.1  # probability of a uniformly random action
    q_init: float = 0.0  # initial Q-values (0 is optimistic when rewards are negative)

    def validate(self) -> None:
        require(0 < self.lr <= 1, f"lr must be in (0, 1], got {self.lr}")
        require(0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}")
        require(0 <= self.epsilon <= 1, f"epsilon must be in [0, 1], got {self.epsilon}")


PRESETS: dict[str, Preset] = {
    "tabular": Preset(),
}
