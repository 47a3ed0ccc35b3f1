"""SAC configuration: static structure, traced hyperparameters, and presets per env family.

The plain defaults are the papers' (Haarnoja et al., 2018, Table 1; the automatic temperature of
Haarnoja et al., 2018b): two hidden layers of 256 ReLU units, Adam at 3e-4 for actor, critics and
temperature, batch 256, tau 0.005, gamma 0.99, one gradient step per environment step, target
entropy -|A|.
"""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import HParamsBase, check_ranges, hparams, require
from rl_algos.common.offpolicy import OffPolicyConfig
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class SACConfig(OffPolicyConfig):
    """Static fields: `OffPolicyConfig`'s update (collect, then `gradient_steps` steps on fresh
    minibatches: critics, actor and temperature, then the Polyak update of the target critics)
    with the papers' defaults."""

    total_timesteps: int = 1_000_000


@hparams
class SACHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    alpha_lr: float = 3e-4
    gamma: float = 0.99
    tau: float = 0.005  # Polyak step of the target critics
    init_alpha: float = 1.0  # the temperature before learning
    target_entropy_per_dim: float = -1.0  # target entropy = this x action dimensions

    def validate(self) -> None:
        check_ranges(self, positive=("actor_lr", "critic_lr", "alpha_lr", "init_alpha"),
                     unit=("gamma",))
        require(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}")


# Defaults per environment family: `Preset`s (static, traced overrides); Box actions only, so
# keyed by family directly (see AlgoSpec.default_preset).
PRESETS: dict[str, Preset] = {
    # Pendulum & co.: one gradient step per environment step from the start of learning, 1000
    # random steps first, two layers of 64 (as TD3's CPU preset): SAC is known to solve
    # Pendulum within 2e4 steps.
    "classic_control": Preset(
        dict(total_timesteps=20_000, num_envs=1, num_steps=1, gradient_steps=1, batch_size=256,
             buffer_size=20_000, learning_starts=1_000, hidden_sizes=(64, 64)),
        {},
    ),
    # brax ids: TD3's brax setting (4 environments, one gradient step per environment step,
    # 256-256 networks, 5k random steps).
    "brax": Preset(
        dict(total_timesteps=1_000_000, num_envs=4, num_steps=1, gradient_steps=4,
             batch_size=256, buffer_size=1_000_000, learning_starts=5_000),
        {},
    ),
    "continuous_control": Preset(
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=1, gradient_steps=8,
             batch_size=256, buffer_size=1_000_000, learning_starts=10_000),
        {},
    ),
}
