"""MAPPO's training program and policy: IPPO's (PPO's update over the agents batched) on the
environment seen through `rl_core.CentralisedCritic`."""

from __future__ import annotations

from typing import Any

from rl_algos.common.envs import centralised
from rl_algos.common.policy import actor_critic_policy
from rl_algos.ippo import make_algorithm as _ippo_make_algorithm
from rl_algos.mappo.config import MAPPOConfig
from rl_core import Algorithm, DataAxis, Policy


def make_algorithm(env: Any, config: MAPPOConfig, data_axis: DataAxis | None = None) -> Algorithm:
    """MAPPO on `env` (one unbatched environment of the multi-agent port)."""
    return _ippo_make_algorithm(centralised(env, "mappo"), config, data_axis)


def make_policy(env: Any, config: MAPPOConfig) -> Policy:
    """The trained network's policy: on the centralised observations in training, on the
    environment's own in evaluation and rendering (the actor alone)."""
    return actor_critic_policy(centralised(env, "mappo"), config)
