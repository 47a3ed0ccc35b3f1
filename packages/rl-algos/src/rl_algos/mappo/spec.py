"""MAPPO's declaration (see `rl_algos.common.spec`): PPO's update with a centralised critic."""

from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.mappo.config import PRESETS, MAPPOConfig, MAPPOHParams
from rl_algos.mappo.train import make_algorithm, make_policy

SPEC = AlgoSpec(
    "mappo", "Multi-agent PPO: a shared decentralised actor, a centralised critic on the global "
             "state (multi-agent environments)",
    config_cls=MAPPOConfig, hparams_cls=MAPPOHParams, presets=PRESETS,
    make_algorithm=make_algorithm, make_policy=make_policy, action_spaces=ANY_ACTION,
    data_parallel=True, extends="ippo", multi_agent=True,
)
