"""VPG's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.vpg.config import PRESETS, VPGConfig, VPGHParams
from rl_algos.vpg.train import make_algorithm

SPEC = AlgoSpec(
    "vpg", "Vanilla Policy Gradient / REINFORCE with a learned value baseline (GAE)",
    config_cls=VPGConfig, hparams_cls=VPGHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION,
)
