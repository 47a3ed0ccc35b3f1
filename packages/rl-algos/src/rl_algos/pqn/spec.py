"""PQN's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.pqn.config import PRESETS, PQNConfig, PQNHParams
from rl_algos.pqn.train import make_algorithm, make_policy
from rl_core import Discrete

SPEC = AlgoSpec(
    "pqn", "Parallelised Q-Network (LayerNorm, Q(lambda), no target network or replay)",
    config_cls=PQNConfig, hparams_cls=PQNHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=(Discrete,), self_play=True,
)
