"""Recurrent MAPPO's configuration: recurrent IPPO's, and presets per multi-agent family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import require
from rl_algos.common.spec import Preset
from rl_algos.ippo_rnn.config import IPPORNNConfig


@dataclass(frozen=True)
class MAPPORNNConfig(IPPORNNConfig):
    """Recurrent IPPO's static fields: `hidden_sizes`, `rnn_hidden` and `head_sizes` size the
    actor and the critic alike (each has its own torso, GRU and head)."""

    def validate(self) -> None:
        super().validate()
        require(not self.normalize_observations,
                "mappo_rnn does not normalise observations (its actor also acts on the "
                "environment's own observations, which the statistics of the centralised ones "
                "do not fit); set normalize_observations=False")


PRESETS: dict[str, Preset] = {
    # JaxMARL's baselines/MAPPO/config/mappo_homogenous_rnn_smax.yaml: actor and critic each a
    # ReLU layer of 128, a GRU of 128 and a ReLU layer of 128; 128 envs x 128 steps, 4 epochs x 4
    # minibatches, lr 2e-3 annealed, clip 0.2, no entropy bonus, gradient norm 0.25, 1e7
    # environment steps.
    "smax": Preset(
        dict(total_timesteps=10_000_000, num_envs=128, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(128,), rnn_hidden=128, head_sizes=(128,),
             activation="relu", anneal_lr=True),
        dict(lr=2e-3, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.0, vf_coef=0.5,
             max_grad_norm=0.25),
    ),
    # JaxMARL's baselines/MAPPO/config/mappo_homogenous_rnn_mpe.yaml: the same network with
    # tanh; 16 envs x 128 steps, 4 epochs x 4 minibatches, lr 2e-3 annealed, clip 0.2, entropy
    # 0.01, gradient norm 0.5, 1e7 environment steps.
    "mpe": Preset(
        dict(total_timesteps=10_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=4, hidden_sizes=(128,), rnn_hidden=128, head_sizes=(128,),
             activation="tanh", anneal_lr=True),
        dict(lr=2e-3, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.5),
    ),
}
