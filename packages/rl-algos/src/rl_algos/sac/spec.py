"""SAC's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.sac.config import PRESETS, SACConfig, SACHParams
from rl_algos.sac.train import make_algorithm, make_policy
from rl_core import Box

SPEC = AlgoSpec(
    "sac", "Soft Actor-Critic (squashed Gaussian, twin critics, learned temperature, replay)",
    config_cls=SACConfig, hparams_cls=SACHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=(Box,), action_masks=False,
)
