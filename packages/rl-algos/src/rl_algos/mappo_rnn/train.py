"""Recurrent MAPPO's training program and policy: recurrent PPO's (over the agents batched) on
the environment seen through `rl_core.CentralisedCritic`, whose `actor_size` splits the network
into a recurrent actor and a recurrent critic."""

from __future__ import annotations

from typing import Any

from rl_algos.common.envs import centralised
from rl_algos.common.recurrent import recurrent_actor_critic_policy
from rl_algos.ippo_rnn.spec import SPEC as IPPO_RNN
from rl_algos.mappo_rnn.config import MAPPORNNConfig
from rl_core import Algorithm, Policy


def make_algorithm(env: Any, config: MAPPORNNConfig) -> Algorithm:
    """Recurrent MAPPO on `env` (one unbatched environment of the multi-agent port)."""
    return IPPO_RNN.make_algorithm(centralised(env, "mappo_rnn"), config)


def make_policy(env: Any, config: MAPPORNNConfig) -> Policy:
    """The trained network's policy with memory: on the centralised observations in training,
    on the environment's own in evaluation and rendering (the actor alone)."""
    return recurrent_actor_critic_policy(centralised(env, "mappo_rnn"), config)
