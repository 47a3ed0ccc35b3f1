"""MAPPO configuration: PPO's settings, and presets per multi-agent environment family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import hparams, require
from rl_algos.common.spec import Preset
from rl_algos.ppo.config import PPOConfig, PPOHParams


@dataclass(frozen=True)
class MAPPOConfig(PPOConfig):
    """PPO's static fields; `num_envs` counts environments (each holding every agent)."""

    def validate(self) -> None:
        super().validate()
        require(self.cnn_part == "", "mappo's networks read flat observations; leave cnn_part "
                                     "empty")
        require(not self.normalize_observations,
                "mappo does not normalise observations (its actor also acts on the "
                "environment's own observations, which the statistics of the centralised ones "
                "do not fit); set normalize_observations=False")
        require(not self.fast_update, "mappo's actor and critic read different parts of the "
                                      "observation, which fast_update does not split; set "
                                      "fast_update=False")


@hparams
class MAPPOHParams(PPOHParams):
    """PPO's traced hyperparameters."""


PRESETS: dict[str, Preset] = {
    # IPPO's mpe preset (JaxMARL's ippo_ff_mpe.yaml: 16 envs x 128 steps, 4 epochs x 4
    # minibatches, tanh MLPs of 64-64, lr 2.5e-4 annealed, 1e7 environment steps), so that the
    # centralised critic is the only difference from `ippo`.
    "mpe": Preset(
        dict(total_timesteps=10_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(64, 64), activation="tanh", anneal_lr=True),
        dict(lr=2.5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.5),
    ),
}
