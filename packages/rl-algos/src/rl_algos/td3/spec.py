"""TD3's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.td3.config import PRESETS, TD3Config, TD3HParams
from rl_algos.td3.train import make_algorithm, make_policy
from rl_core import Box

SPEC = AlgoSpec(
    "td3", "Twin Delayed DDPG (twin critics, target smoothing, delayed actor, replay buffer)",
    config_cls=TD3Config, hparams_cls=TD3HParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=(Box,), action_masks=False,
)
