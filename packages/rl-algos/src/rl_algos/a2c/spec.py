"""A2C's declaration (see `rl_algos.common.spec`)."""

from rl_algos.a2c.config import PRESETS, A2CConfig, A2CHParams
from rl_algos.a2c.train import make_algorithm
from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec

SPEC = AlgoSpec(
    "a2c", "Advantage Actor-Critic, synchronous (n-step returns, one RMSProp step/rollout)",
    config_cls=A2CConfig, hparams_cls=A2CHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION,
)
