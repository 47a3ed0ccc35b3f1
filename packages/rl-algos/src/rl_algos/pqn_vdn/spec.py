"""PQN-VDN's declaration (see `rl_algos.common.spec`): PQN's update on the team's summed values."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.pqn_vdn.config import PRESETS, PQNVDNConfig, PQNVDNHParams
from rl_algos.pqn_vdn.train import make_algorithm, make_policy
from rl_core import Discrete

SPEC = AlgoSpec(
    "pqn_vdn", "PQN with value decomposition: one Q-network, the team's value the agents' sum "
               "(multi-agent environments)",
    config_cls=PQNVDNConfig, hparams_cls=PQNVDNHParams, presets=PRESETS,
    make_algorithm=make_algorithm, make_policy=make_policy, action_spaces=(Discrete,),
    extends="pqn", multi_agent=True,
)
