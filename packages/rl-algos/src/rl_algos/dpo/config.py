"""DPO configuration: PPO's static structure and hyperparameters plus the drift's α and β."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rl_algos.common.config import require
from rl_algos.ppo.config import PRESETS as PPO_PRESETS
from rl_algos.ppo.config import PPOConfig


@dataclass(frozen=True)
class DPOConfig(PPOConfig):
    """Static fields: exactly PPO's (same rollout, epochs, minibatches, networks)."""


class DPOHParams(NamedTuple):
    """PPO's traced hyperparameters plus the drift's `alpha` (A ≥ 0) and `beta` (A < 0).

    `clip_eps` does not enter DPO's policy objective; it is still used by the clipped value loss
    (when `clip_value_loss`) and by the reported clip fraction, as in PPO."""

    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    alpha: float = 2.0
    beta: float = 0.6

    def validate(self) -> None:
        require(self.lr > 0, f"lr must be > 0, got {self.lr}")
        require(0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}")
        require(0 <= self.gae_lambda <= 1, f"gae_lambda must be in [0, 1], got {self.gae_lambda}")
        require(self.clip_eps > 0, f"clip_eps must be > 0, got {self.clip_eps}")
        require(self.ent_coef >= 0, f"ent_coef must be >= 0, got {self.ent_coef}")
        require(self.vf_coef >= 0, f"vf_coef must be >= 0, got {self.vf_coef}")
        require(self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}")
        require(self.alpha > 0, f"alpha must be > 0 (the paper uses 2), got {self.alpha}")
        require(self.beta > 0, f"beta must be > 0 (the paper uses 0.6), got {self.beta}")


# The same presets as PPO: DPO is compared with PPO at equal budgets and settings.
PRESETS: dict[str, tuple[dict, dict]] = {k: (dict(s), dict(h)) for k, (s, h) in
                                         PPO_PRESETS.items()}
