"""Recurrent IPPO's configuration: recurrent PPO's, and presets per multi-agent family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.spec import Preset
from rl_algos.ppo_rnn.config import PPORNNConfig


@dataclass(frozen=True)
class IPPORNNConfig(PPORNNConfig):
    """Recurrent PPO's static fields; `num_envs` counts environments (each holding every agent):
    `num_minibatches` divides it, and a recurrent minibatch is the whole sequences of
    `num_envs / num_minibatches` environments' agents."""


PRESETS: dict[str, Preset] = {
    # JaxMARL's baselines/IPPO/config/ippo_rnn_mpe.yaml: a ReLU layer of 128, a GRU of 128, actor
    # and critic heads of one ReLU layer of 128; 16 envs x 128 steps, 4 epochs x 2 minibatches,
    # lr 5e-4 annealed, clip 0.3, value coefficient 1.0, 1e7 environment steps.
    "mpe": Preset(
        dict(total_timesteps=10_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=2, hidden_sizes=(128,), rnn_hidden=128, head_sizes=(128,),
             activation="relu", anneal_lr=True),
        dict(lr=5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.3, ent_coef=0.01, vf_coef=1.0,
             max_grad_norm=0.5),
    ),
    # JaxMARL's baselines/IPPO/config/ippo_rnn_smax.yaml (SMAX against the heuristic enemy): the
    # same network, 128 envs x 128 steps, 4 epochs x 4 minibatches, lr 4e-3 annealed, clip 0.05,
    # gradient norm 0.25, 1e7 environment steps.
    "smax": Preset(
        dict(total_timesteps=10_000_000, num_envs=128, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(128,), rnn_hidden=128, head_sizes=(128,),
             activation="relu", anneal_lr=True),
        dict(lr=4e-3, gamma=0.99, gae_lambda=0.95, clip_eps=0.05, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.25),
    ),
}
