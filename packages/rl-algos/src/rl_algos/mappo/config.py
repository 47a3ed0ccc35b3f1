"""MAPPO configuration: PPO's settings, and presets per multi-agent environment family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import hparams, require
from rl_algos.common.spec import Preset
from rl_algos.ippo import PRESETS as IPPO_PRESETS
from rl_algos.ippo import IPPOConfig, IPPOHParams


@dataclass(frozen=True)
class MAPPOConfig(IPPOConfig):
    """IPPO's static fields (PPO's, flat observations); `num_envs` counts environments (each
    holding every agent)."""

    def validate(self) -> None:
        super().validate()
        require(not self.normalize_observations,
                "mappo does not normalise observations (its actor also acts on the "
                "environment's own observations, which the statistics of the centralised ones "
                "do not fit); set normalize_observations=False")
        require(not self.fast_update, "mappo's actor and critic read different parts of the "
                                      "observation, which fast_update does not split; set "
                                      "fast_update=False")


@hparams
class MAPPOHParams(IPPOHParams):
    """PPO's traced hyperparameters."""


# IPPO's presets (mpe: JaxMARL's ippo_ff_mpe.yaml), so that the centralised critic is the only
# difference from `ippo`.
PRESETS: dict[str, Preset] = {k: Preset(dict(p.config), dict(p.hparams), dict(p.env))
                              for k, p in IPPO_PRESETS.items()}
