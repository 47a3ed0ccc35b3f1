"""Recurrent MAPPO's declaration (see `rl_algos.common.spec`): recurrent PPO's update with a
recurrent centralised critic."""

from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.ippo_rnn.spec import SPEC as IPPO_RNN
from rl_algos.mappo_rnn.config import PRESETS, MAPPORNNConfig
from rl_algos.mappo_rnn.train import make_algorithm, make_policy

SPEC = AlgoSpec(
    "mappo_rnn", "Recurrent multi-agent PPO: a shared GRU actor on each agent's observation, a "
                 "GRU critic on the global state (multi-agent environments)",
    config_cls=MAPPORNNConfig, hparams_cls=IPPO_RNN.hparams_cls, presets=PRESETS,
    make_algorithm=make_algorithm, make_policy=make_policy, action_spaces=ANY_ACTION,
    extends="ippo_rnn", multi_agent=True,
)
