"""IPPO configuration: PPO's settings, and presets per multi-agent environment family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import hparams, require
from rl_algos.common.spec import Preset
from rl_algos.ppo.config import PPOConfig, PPOHParams


@dataclass(frozen=True)
class IPPOConfig(PPOConfig):
    """PPO's static fields; `num_envs` counts environments (each holding every agent), so a
    minibatch holds `num_envs * num_agents * num_steps / num_minibatches` transitions.
    `reward_shaping_horizon` > 0 (environment steps) trains on the environment's shaping reward
    (`info["shaped_reward"]`: Overcooked's) annealed linearly to 0 over that many steps, as
    JaxMARL's IPPO baselines do (`rl_core.AnnealedRewardShaping`)."""

    reward_shaping_horizon: int = 0

    def validate(self) -> None:
        super().validate()
        require(self.reward_shaping_horizon >= 0, "reward_shaping_horizon must be >= 0 "
                f"(0: no shaping), got {self.reward_shaping_horizon}")
        require(self.cnn_part == "", "ippo's networks read flat observations; leave cnn_part "
                                     "empty")


@hparams
class IPPOHParams(PPOHParams):
    """PPO's traced hyperparameters."""


PRESETS: dict[str, Preset] = {
    # JaxMARL's baselines/IPPO/config/ippo_ff_mpe.yaml: 16 envs x 128 steps, 4 epochs x 4
    # minibatches, tanh MLPs of 64-64, lr 2.5e-4 annealed, 1e7 environment steps.
    "mpe": Preset(
        dict(total_timesteps=10_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(64, 64), activation="tanh", anneal_lr=True),
        dict(lr=2.5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.5),
    ),
    # JaxMARL's baselines/IPPO/config/ippo_ff_overcooked.yaml: 16 envs x 128 steps, 4 epochs x 4
    # minibatches, tanh MLPs of 64-64, lr 2.5e-4 annealed, the shaping reward annealed away over
    # the first 2.5e6 of its 5e6 environment steps.
    "overcooked": Preset(
        dict(total_timesteps=5_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(64, 64), activation="tanh", anneal_lr=True,
             reward_shaping_horizon=2_500_000),
        dict(lr=2.5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.5),
    ),
}
