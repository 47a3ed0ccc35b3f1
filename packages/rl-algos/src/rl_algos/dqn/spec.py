"""DQN's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.dqn.config import PRESETS, DQNConfig, DQNHParams
from rl_algos.dqn.train import make_algorithm, make_policy
from rl_core import Discrete

SPEC = AlgoSpec(
    "dqn", "Deep Q-Network (replay, target network, Double DQN targets, n-step, dueling)",
    config_cls=DQNConfig, hparams_cls=DQNHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=(Discrete,),
)
