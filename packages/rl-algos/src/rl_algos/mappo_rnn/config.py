"""Recurrent MAPPO's configuration: recurrent IPPO's, and presets per multi-agent family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import require
from rl_algos.common.spec import Preset
from rl_algos.ippo_rnn.config import JAXMARL_RNN, JAXMARL_SMAX, JAXMARL_SMAX_HPARAMS, IPPORNNConfig


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
    # JaxMARL's baselines/MAPPO/config/mappo_homogenous_rnn_smax.yaml: its SMAX settings
    # (`JAXMARL_SMAX`, for the actor and the critic each), lr 2e-3, clip 0.2, no entropy bonus.
    "smax": Preset(JAXMARL_SMAX,
                   dict(JAXMARL_SMAX_HPARAMS, lr=2e-3, clip_eps=0.2, ent_coef=0.0)),
    # JaxMARL's baselines/MAPPO/config/mappo_homogenous_rnn_mpe.yaml: the same with tanh; 16
    # envs, 4 minibatches, lr 2e-3, clip 0.2, entropy 0.01, gradient norm 0.5.
    "mpe": Preset(
        dict(JAXMARL_RNN, num_envs=16, num_minibatches=4, activation="tanh"),
        dict(lr=2e-3, gamma=0.99, gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
             max_grad_norm=0.5),
    ),
}
