"""MAPPO's training program and policy: IPPO's (PPO's update over the agents batched) on the
environment seen through `rl_core.CentralisedCritic`."""

from __future__ import annotations

from typing import Any

from rl_algos.common.config import ConfigError
from rl_algos.common.policy import actor_critic_policy
from rl_algos.ippo import make_algorithm as _ippo_make_algorithm
from rl_algos.mappo.config import MAPPOConfig
from rl_core import Algorithm, Box, CentralisedCritic, DataAxis, Policy


def centralised(env: Any) -> CentralisedCritic:
    """`env` with the critic's input after each agent's observation; refuses what it cannot
    take in one line."""
    space = env.observation_space
    if not (isinstance(space, Box) and len(space.shape) == 1):
        raise ConfigError(f"mappo reads flat observations [D], and this environment observes "
                          f"{space}; pick an environment with flat observations")
    return CentralisedCritic(env)


def make_algorithm(env: Any, config: MAPPOConfig, data_axis: DataAxis | None = None) -> Algorithm:
    """MAPPO on `env` (one unbatched environment of the multi-agent port)."""
    return _ippo_make_algorithm(centralised(env), config, data_axis)


def make_policy(env: Any, config: MAPPOConfig) -> Policy:
    """The trained network's policy: on the centralised observations in training, on the
    environment's own in evaluation and rendering (the actor alone)."""
    return actor_critic_policy(centralised(env), config)
