"""Recurrent IPPO's declaration (see `rl_algos.common.spec`): recurrent PPO over the agents."""

from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.ippo_rnn.config import PRESETS, IPPORNNConfig
from rl_algos.ppo_rnn.spec import SPEC as PPO_RNN

SPEC = AlgoSpec(
    "ippo_rnn", "Independent recurrent PPO, one GRU network shared by every agent (multi-agent)",
    config_cls=IPPORNNConfig, hparams_cls=PPO_RNN.hparams_cls, presets=PRESETS,
    make_algorithm=PPO_RNN.make_algorithm, make_policy=PPO_RNN.make_policy,
    action_spaces=ANY_ACTION, extends="ppo_rnn", multi_agent=True,
)
