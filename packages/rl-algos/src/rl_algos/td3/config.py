"""TD3 configuration: static structure, traced hyperparameters, and presets per env family.

The plain defaults are the paper's (Fujimoto et al., 2018, Table 3): two hidden layers of 400 and
300 ReLU units, Adam at 1e-3 for both networks, batch 100, tau 0.005, exploration noise N(0, 0.1),
target-policy noise N(0, 0.2) clipped to ±0.5, policy delay 2, 1e4 steps of uniformly random
actions first, one gradient step per environment step. Noise scales are in units of half the
action range (the actor acts in [-1, 1], rescaled to the Box bounds).
"""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import HParamsBase, check_ranges, hparams, require, require_positive
from rl_algos.common.offpolicy import OffPolicyConfig
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class TD3Config(OffPolicyConfig):
    """Static fields: they shape the compiled program (changing one recompiles).

    `OffPolicyConfig`'s update (collect, then `gradient_steps` critic steps on fresh minibatches);
    after every `policy_delay` critic steps come one actor step and the Polyak update of both
    target networks.
    """

    total_timesteps: int = 1_000_000
    num_envs: int = 1
    num_steps: int = 2  # vector steps per update
    gradient_steps: int = 2  # critic steps per update
    policy_delay: int = 2
    batch_size: int = 100
    buffer_size: int = 1_000_000
    learning_starts: int = 10_000  # environment steps of uniformly random actions, no learning
    hidden_sizes: tuple[int, ...] = (400, 300)
    activation: str = "relu"

    def validate(self) -> None:
        super().validate()
        require_positive(self, "policy_delay")
        require(
            self.gradient_steps % self.policy_delay == 0,
            f"gradient_steps={self.gradient_steps} must be a multiple of policy_delay="
            f"{self.policy_delay} (one actor step per policy_delay critic steps); e.g. set "
            f"gradient_steps={self.policy_delay * max(1, self.gradient_steps // self.policy_delay)}"
            " and scale num_steps to keep the update-to-data ratio",
        )


@hparams
class TD3HParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    actor_lr: float = 1e-3
    critic_lr: float = 1e-3
    gamma: float = 0.99
    tau: float = 0.005  # Polyak step of the target networks
    exploration_noise: float = 0.1  # std of the Gaussian added to actions while collecting
    target_noise: float = 0.2  # std of the target-policy smoothing noise
    target_noise_clip: float = 0.5  # the smoothing noise is clipped to ±this

    def validate(self) -> None:
        check_ranges(self, positive=("actor_lr", "critic_lr"), unit=("gamma",),
                     non_negative=("exploration_noise", "target_noise", "target_noise_clip"))
        require(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}")


# Defaults per environment family: `Preset`s (static, traced overrides). TD3 takes Box actions
# only, so these are keyed by family directly (see AlgoSpec.default_preset).
PRESETS: dict[str, Preset] = {
    # Pendulum & co. in 1e5 steps on a CPU: small networks, 4 environments, a quarter of a
    # gradient step per environment step (docs/algorithms.md has the runs behind these values).
    "classic_control": Preset(
        dict(total_timesteps=100_000, num_envs=4, num_steps=2, gradient_steps=2, batch_size=256,
             buffer_size=100_000, learning_starts=5_000, hidden_sizes=(64, 64)),
        dict(actor_lr=1e-3, critic_lr=1e-3),
    ),
    # brax ids (family 'brax'): the paper's update-to-data ratio of one gradient step per
    # environment step and its 256-256 networks, Adam 3e-4, batch 256, from 4 environments, with
    # 5k random steps instead of 25k so that a 1e5-step CPU run learns (docs/adapters-brax.md has
    # the runs: 4 seeds of inverted_pendulum at 1000 by ~6e4 steps on the 'generalized' backend).
    "brax": Preset(
        dict(total_timesteps=1_000_000, num_envs=4, num_steps=1, gradient_steps=4,
             batch_size=256, buffer_size=1_000_000, learning_starts=5_000,
             hidden_sizes=(256, 256)),
        dict(actor_lr=3e-4, critic_lr=3e-4),
    ),
    # Other continuous-control families: the settings of the authors' released code (256-256
    # networks, Adam 3e-4, batch 256, 25k random steps) with 16 environments and half a gradient
    # step per environment step. On brax/inverted_pendulum (spring backend) it reached only
    # 50-200 by 9e4 steps, hence the separate 'brax' preset above.
    "continuous_control": Preset(
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=1, gradient_steps=8,
             batch_size=256, buffer_size=1_000_000, learning_starts=25_000,
             hidden_sizes=(256, 256)),
        dict(actor_lr=3e-4, critic_lr=3e-4),
    ),
}
