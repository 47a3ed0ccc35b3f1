"""LPO configuration: PPO's static structure and hyperparameters plus the drift's parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rl_algos.common.config import hparams
from rl_algos.common.spec import Preset
from rl_algos.ppo.config import PRESETS as PPO_PRESETS
from rl_algos.ppo.config import PPOConfig, PPOHParams


@dataclass(frozen=True)
class LPOConfig(PPOConfig):
    """Static fields: exactly PPO's (same rollout, epochs, minibatches, networks)."""


@hparams
class LPOHParams(PPOHParams):
    """PPO's traced hyperparameters plus `drift`, the drift network's parameters (a `MetaMLP`,
    from `rl evolve --meta drift`; `rl run --algo lpo --meta-params FILE` fills it in). The drift
    is a traced input like the learning rate: many drifts can share one compiled program.

    `clip_eps` does not enter LPO's policy objective; it is still used by the clipped value loss
    (when `clip_value_loss`) and by the reported clip fraction, as in PPO."""

    drift: Any = None


# The same presets as PPO: LPO is compared with PPO at equal budgets and settings.
PRESETS: dict[str, Preset] = {k: Preset(dict(p.config), dict(p.hparams), dict(p.env))
                              for k, p in PPO_PRESETS.items()}
