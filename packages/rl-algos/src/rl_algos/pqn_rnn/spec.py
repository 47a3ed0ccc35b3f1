"""Recurrent PQN's declaration (see `rl_algos.common.spec`): PQN's config and hyperparameters."""

from rl_algos.common.spec import AlgoSpec
from rl_algos.pqn.config import PQNHParams
from rl_algos.pqn_rnn.config import PRESETS, PQNRNNConfig
from rl_algos.pqn_rnn.train import make_algorithm, make_policy
from rl_core import Discrete

SPEC = AlgoSpec(
    "pqn_rnn", "Recurrent PQN (a GRU before the Q head; for partially observed tasks)",
    config_cls=PQNRNNConfig, hparams_cls=PQNHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=(Discrete,), extends="pqn",
)
