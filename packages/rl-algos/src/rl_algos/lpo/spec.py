"""LPO's declaration (see `rl_algos.common.spec`): PPO's loop with an evolved drift."""

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.lpo.config import PRESETS, LPOConfig, LPOHParams
from rl_algos.lpo.drift import init_drift
from rl_algos.lpo.train import make_algorithm

SPEC = AlgoSpec(
    "lpo", "Learned Policy Optimisation (PPO's loop with a drift evolved by `rl evolve`)",
    config_cls=LPOConfig, hparams_cls=LPOHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION, data_parallel=True,
    self_play=True,
    meta_field="drift", meta_target="drift", meta_init=init_drift, extends="ppo",
)
