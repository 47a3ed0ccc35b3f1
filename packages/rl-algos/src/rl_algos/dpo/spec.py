"""DPO's declaration (see `rl_algos.common.spec`): PPO's loop with another objective."""

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.dpo.config import PRESETS, DPOConfig, DPOHParams
from rl_algos.dpo.train import make_algorithm

SPEC = AlgoSpec(
    "dpo", "Discovered Policy Optimisation (PPO's loop with the discovered drift objective)",
    config_cls=DPOConfig, hparams_cls=DPOHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION, data_parallel=True,
    self_play=True, extends="ppo",
)
