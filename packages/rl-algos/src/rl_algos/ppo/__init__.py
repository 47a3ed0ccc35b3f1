"""Proximal Policy Optimization (Schulman et al., 2017) with the implementation details of the
well-known reference implementations (Huang et al., 2022, "The 37 Implementation Details of
Proximal Policy Optimization")."""

from rl_algos.ppo.config import PRESETS, PPOConfig, PPOHParams
from rl_algos.ppo.losses import clipped_surrogate, ppo_loss, value_loss
from rl_algos.ppo.train import make_algorithm, make_train

__all__ = ["PRESETS", "PPOConfig", "PPOHParams", "clipped_surrogate", "make_algorithm",
           "make_train", "ppo_loss", "value_loss"]
