"""Recurrent PPO's configuration: PPO's, with the recurrent network's sizes. Its hyperparameters
are PPO's (`PPOHParams`)."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import require
from rl_algos.common.networks import check_network
from rl_algos.ppo.config import PPOConfig


@dataclass(frozen=True)
class PPORNNConfig(PPOConfig):
    """`hidden_sizes` is the torso before the GRU (shared by actor and critic), `rnn_hidden` the
    GRU's units, `head_sizes` the actor's and the critic's own layers after it. Minibatches are
    whole environments (`num_minibatches` divides `num_envs`), each replayed over its
    `num_steps` steps."""

    hidden_sizes: tuple[int, ...] = (64,)
    rnn_hidden: int = 64
    head_sizes: tuple[int, ...] = (64,)

    def validate(self) -> None:
        super().validate()
        check_network(self.head_sizes, self.activation)
        require(self.rnn_hidden >= 1, f"rnn_hidden must be >= 1, got {self.rnn_hidden}")
        require(self.num_envs % self.num_minibatches == 0,
                f"num_minibatches={self.num_minibatches} must divide num_envs={self.num_envs}: "
                "recurrent minibatches are whole environments' sequences")
        require(not self.cnn_part, "ppo_rnn has no convolutional torso; leave cnn_part empty")


# Defaults per environment family: (static overrides, hparam overrides). 16 environments x 128
# steps, 4 epochs of 4 minibatches of 4 whole environments.
PRESETS: dict[str, tuple[dict, dict]] = {
    "classic_control": (dict(total_timesteps=500_000, num_envs=16, num_steps=128), {}),
    "bsuite": (dict(total_timesteps=200_000, num_envs=16, num_steps=128), {}),
}
