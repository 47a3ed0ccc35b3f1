"""Recurrent PQN's configuration: PQN's, with the GRU's size. Its hyperparameters are PQN's
(`PQNHParams`)."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import require
from rl_algos.common.spec import Preset
from rl_algos.pqn.config import PQNConfig


@dataclass(frozen=True)
class PQNRNNConfig(PQNConfig):
    """`num_layers` dense layers of `hidden_size` (each with LayerNorm) on the flattened
    observation, then a GRU of `rnn_hidden` units, then the linear Q head. Minibatches are whole
    environments (`num_minibatches` divides `num_envs`), each replayed over its `num_steps`
    steps. No convolution (`cnn_channels` is ignored: observations are flattened)."""

    rnn_hidden: int = 128

    def validate(self) -> None:
        super().validate()
        require(self.rnn_hidden >= 1, f"rnn_hidden must be >= 1, got {self.rnn_hidden}")
        require(self.num_envs % self.num_minibatches == 0,
                f"num_minibatches={self.num_minibatches} must divide num_envs={self.num_envs}: "
                "recurrent minibatches are whole environments' sequences")
        self.require_no_pool("pqn_rnn", "pqn")


# Defaults per environment family: `Preset`s (static, traced overrides). bsuite (MemoryChain):
# 16 environments x 128 steps, 4 epochs of 4 minibatches of 4 whole environments, λ 0.95, ε down
# to 0.05 over the first half of the run (the reward comes only at an episode's end).
# classic_control (CartPole without velocities, `--env-arg obs_keep=0,2`): PQN's CartPole
# settings (rewards x 0.1, λ 0.95, lr annealed, ε down to 0.2) on 32 environments x 64 steps.
PRESETS: dict[str, Preset] = {
    "classic_control": Preset(
        dict(total_timesteps=500_000, num_envs=32, num_steps=64, num_epochs=4,
             num_minibatches=4, hidden_size=128, num_layers=1, rnn_hidden=128, anneal_lr=True),
        dict(lr=3e-4, reward_scale=0.1, q_lambda=0.95, eps_finish=0.2),
    ),
    "bsuite": Preset(
        dict(total_timesteps=100_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_size=64, num_layers=1, rnn_hidden=64),
        dict(lr=3e-4, q_lambda=0.95, eps_finish=0.05, eps_decay=0.5),
    ),
}
# Craftax (Matthews et al., 2024): purejaxql's recurrent PQN on Craftax (Gallici et al., 2024;
# pqn_rnn_craftax.yaml: a LayerNorm layer and a GRU of 512, 1024 envs x 128 steps, 4 epochs x 4
# minibatches, lr 3e-4 annealed, gamma 0.99, lambda 0.5, ε from 1 to 0.005 over the first 10%,
# grad-norm 0.5; its last action as an extra GRU input is not here) scaled as ppo_rnn's craftax
# preset is: 64 envs x 64 steps (16 environments a minibatch) and layers of 256, for 1e6 steps.
# What the open-ended presets share: a layer and a GRU of 256, lr 3e-4 annealed, γ 0.99, ε from
# 1, gradient norm 0.5.
_OPEN_ENDED = dict(hidden_size=256, num_layers=1, rnn_hidden=256, anneal_lr=True)
_OPEN_ENDED_HPARAMS = dict(lr=3e-4, gamma=0.99, eps_start=1.0, max_grad_norm=0.5)
PRESETS["craftax"] = Preset(
    dict(_OPEN_ENDED, total_timesteps=1_000_000, num_envs=64, num_steps=64, num_epochs=4,
         num_minibatches=4),
    dict(_OPEN_ENDED_HPARAMS, q_lambda=0.5, eps_finish=0.005, eps_decay=0.1),
)
PRESETS["craftax_classic"] = PRESETS["craftax"]
# XLand-MiniGrid (Nikulin et al., 2024): no published recurrent PQN; ppo_rnn's `xland` rollout
# and sizes (1024 envs x 16 steps, a layer of 256, a GRU of 256, 16 minibatches of 64
# environments) with PQN's update: 2 epochs, lr 3e-4 annealed, gamma 0.99, lambda 0.95 over the
# short sequences, ε from 1 to 0.05 over the first 25%, grad-norm 0.5; 1e7 steps.
PRESETS["xland"] = Preset(
    dict(_OPEN_ENDED, total_timesteps=10_000_000, num_envs=1024, num_steps=16, num_epochs=2,
         num_minibatches=16),
    dict(_OPEN_ENDED_HPARAMS, q_lambda=0.95, eps_finish=0.05, eps_decay=0.25),
)
PRESETS["minigrid"] = PRESETS["xland"]
