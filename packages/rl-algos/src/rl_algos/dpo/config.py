"""DPO configuration: PPO's static structure and hyperparameters plus the drift's α and β."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import hparams, require
from rl_algos.common.spec import Preset
from rl_algos.ppo.config import PRESETS as PPO_PRESETS
from rl_algos.ppo.config import PPOConfig, PPOHParams


@dataclass(frozen=True)
class DPOConfig(PPOConfig):
    """Static fields: exactly PPO's (same rollout, epochs, minibatches, networks)."""


@hparams
class DPOHParams(PPOHParams):
    """PPO's traced hyperparameters plus the drift's `alpha` (A ≥ 0) and `beta` (A < 0).

    `clip_eps` does not enter DPO's policy objective; it is still used by the clipped value loss
    (when `clip_value_loss`) and by the reported clip fraction, as in PPO."""

    alpha: float = 2.0
    beta: float = 0.6

    def validate(self) -> None:
        super().validate()
        require(self.alpha > 0, f"alpha must be > 0 (the paper uses 2), got {self.alpha}")
        require(self.beta > 0, f"beta must be > 0 (the paper uses 0.6), got {self.beta}")


# The same presets as PPO: DPO is compared with PPO at equal budgets and settings.
PRESETS: dict[str, Preset] = {k: Preset(dict(p.config), dict(p.hparams), dict(p.env))
                              for k, p in PPO_PRESETS.items()}
