"""Tabular Q-learning's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.qlearning.config import PRESETS, QLearningConfig, QLearningHParams
from rl_algos.qlearning.train import make_algorithm, make_policy
from rl_core import Discrete

SPEC = AlgoSpec(
    "qlearning", "Tabular Q-learning, epsilon-greedy, many agents vmapped (discrete states)",
    config_cls=QLearningConfig, hparams_cls=QLearningHParams, presets=PRESETS,
    make_algorithm=make_algorithm, make_policy=make_policy, action_spaces=(Discrete,),
    observation_spaces=(Discrete,), action_masks=False,
)
