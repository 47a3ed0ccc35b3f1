"""Recurrent PPO's configuration: PPO's, with the recurrent network's sizes. Its hyperparameters
are PPO's (`PPOHParams`)."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import require
from rl_algos.common.networks import check_network
from rl_algos.common.spec import Preset
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
        require(not self.fast_update, "fast_update is PPO's feed-forward update arrangement; "
                "ppo_rnn has none, so leave fast_update off")
        self.require_no_pool("ppo_rnn", "ppo")


# Defaults per environment family: `Preset`s (static, traced overrides), the settings measured
# in docs/algorithms.md. bsuite (MemoryChain): 16 environments x 128 steps, 4 epochs of 4
# minibatches of 4 whole environments. classic_control (CartPole without velocities, `--env-arg
# obs_keep=0,2`): short sequences of 8 x 32 steps, 10 epochs of one minibatch, lr 1e-3 annealed,
# gamma 0.98, lambda 0.8, no entropy bonus (close to rl-zoo's recurrent PPO on CartPoleNoVel).
PRESETS: dict[str, Preset] = {
    "classic_control": Preset(
        dict(total_timesteps=150_000, num_envs=8, num_steps=32, num_epochs=10,
             num_minibatches=1, activation="relu"),
        dict(lr=1e-3, gamma=0.98, gae_lambda=0.8, ent_coef=0.0),
    ),
    "bsuite": Preset(dict(total_timesteps=100_000, num_envs=16, num_steps=128), {}),
}
# Craftax (Matthews et al., 2024): the paper's PPO-RNN (Craftax_Baselines' ppo_rnn.py: a ReLU
# layer of 512, a GRU of 512, actor and critic heads of two ReLU layers of 512; 1024 envs x 64
# steps, 4 epochs x 8 minibatches, lr 2e-4 annealed, gamma 0.99, lambda 0.8, grad-norm 1.0)
# scaled to a CPU: 64 envs x 64 steps (8 environments a minibatch) and layers of 256, for the
# paper's 1e6-step budget (Craftax-1M). Resets are optimistic (the adapter's ratio, 16).
PRESETS["craftax"] = Preset(
    dict(total_timesteps=1_000_000, num_envs=64, num_steps=64, num_epochs=4, num_minibatches=8,
         hidden_sizes=(256,), rnn_hidden=256, head_sizes=(256, 256), activation="relu",
         anneal_lr=True),
    dict(lr=2e-4, gamma=0.99, gae_lambda=0.8, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
         max_grad_norm=1.0),
)
PRESETS["craftax_classic"] = PRESETS["craftax"]
# XLand-MiniGrid (Nikulin et al., 2024): its single-task PPO (training/train_single_task.py: 8192
# envs x 16 steps, one epoch of 16 minibatches, lr 1e-3 annealed, gamma 0.99, lambda 0.95, clip
# 0.2, entropy 0.01, grad-norm 0.5, a GRU of 1024 and heads of 256) scaled to a CPU: 1024 envs
# and a GRU of 256, for 1e7 steps; the torso is one ReLU layer of 256 on the flat view where theirs
# embeds the tile and colour ids and convolves them (`tools/xland_learning.py` runs both).
PRESETS["xland"] = Preset(
    dict(total_timesteps=10_000_000, num_envs=1024, num_steps=16, num_epochs=1,
         num_minibatches=16, hidden_sizes=(256,), rnn_hidden=256, head_sizes=(256,),
         activation="relu", anneal_lr=True),
    dict(lr=1e-3, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
         max_grad_norm=0.5),
)
PRESETS["minigrid"] = PRESETS["xland"]
