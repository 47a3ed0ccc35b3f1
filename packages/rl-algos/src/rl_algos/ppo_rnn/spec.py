"""Recurrent PPO's declaration (see `rl_algos.common.spec`): PPO's hyperparameters and loss."""

from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.ppo.config import PPOHParams
from rl_algos.ppo_rnn.config import PRESETS, PPORNNConfig
from rl_algos.ppo_rnn.train import make_algorithm, make_policy

SPEC = AlgoSpec(
    "ppo_rnn", "Recurrent PPO (a GRU core; for partially observed tasks)",
    config_cls=PPORNNConfig, hparams_cls=PPOHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=make_policy, action_spaces=ANY_ACTION, extends="ppo",
)
