"""IPPO's declaration (see `rl_algos.common.spec`): PPO's update over the agents batched."""

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.ippo import PRESETS, IPPOConfig, IPPOHParams, make_algorithm

SPEC = AlgoSpec(
    "ippo", "Independent PPO, one network shared by every agent (multi-agent environments)",
    config_cls=IPPOConfig, hparams_cls=IPPOHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION, data_parallel=True, extends="ppo",
    multi_agent=True,
)
