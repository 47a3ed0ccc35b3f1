"""Recurrent IPPO's configuration: recurrent PPO's, and presets per multi-agent family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rl_algos.common.spec import Preset
from rl_algos.ppo_rnn.config import PPORNNConfig


@dataclass(frozen=True)
class IPPORNNConfig(PPORNNConfig):
    """Recurrent PPO's static fields; `num_envs` counts environments (each holding every agent):
    `num_minibatches` divides it, and a recurrent minibatch is the whole sequences of
    `num_envs / num_minibatches` environments' agents."""


# What JaxMARL's recurrent IPPO and MAPPO configs (baselines/IPPO/config/ippo_rnn_*.yaml,
# baselines/MAPPO/config/mappo_homogenous_rnn_*.yaml) share: a layer of 128, a GRU of 128 and a
# head layer of 128, 128 steps per rollout, 4 epochs, lr annealed, 1e7 environment steps.
JAXMARL_RNN: dict[str, Any] = dict(
    total_timesteps=10_000_000, num_steps=128, num_epochs=4, hidden_sizes=(128,), rnn_hidden=128,
    head_sizes=(128,), anneal_lr=True)
# What their SMAX configs share beyond it: ReLU, 128 envs in 4 minibatches, and of the
# hyperparameters γ 0.99, GAE λ 0.95, value coefficient 0.5 and gradient norm 0.25.
JAXMARL_SMAX: dict[str, Any] = dict(JAXMARL_RNN, num_envs=128, num_minibatches=4,
                                    activation="relu")
JAXMARL_SMAX_HPARAMS: dict[str, Any] = dict(gamma=0.99, gae_lambda=0.95, vf_coef=0.5,
                                            max_grad_norm=0.25)

PRESETS: dict[str, Preset] = {
    # JaxMARL's ippo_rnn_mpe.yaml: ReLU; 16 envs, 2 minibatches, lr 5e-4, clip 0.3, value
    # coefficient 1.0.
    "mpe": Preset(
        dict(JAXMARL_RNN, num_envs=16, num_minibatches=2, activation="relu"),
        dict(lr=5e-4, gamma=0.99, gae_lambda=0.95, clip_eps=0.3, ent_coef=0.01, vf_coef=1.0,
             max_grad_norm=0.5),
    ),
    # JaxMARL's ippo_rnn_smax.yaml (SMAX against the heuristic enemy): its SMAX settings
    # (`JAXMARL_SMAX`), lr 4e-3, clip 0.05, entropy 0.01.
    "smax": Preset(JAXMARL_SMAX,
                   dict(JAXMARL_SMAX_HPARAMS, lr=4e-3, clip_eps=0.05, ent_coef=0.01)),
}
