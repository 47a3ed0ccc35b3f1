"""The algorithm registry: a plain dict from name to `AlgoSpec`. An algorithm declares which
action spaces it supports; a mismatch is refused before anything compiles."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rl_algos import dpo, ppo, pqn, qlearning, vpg
from rl_algos.common.config import ConfigError
from rl_core import Algorithm, Box, Discrete, MultiDiscrete

# Environment families whose every task has continuous actions: their own preset (tuned for that
# family) takes precedence over the generic 'continuous_control' one. Mixed families such as
# gymnax's 'classic_control' (CartPole and Pendulum) are not listed: their preset is for the
# discrete tasks.
CONTINUOUS_FAMILIES = frozenset({"brax"})


@dataclass(frozen=True)
class AlgoSpec:
    name: str
    description: str
    config_cls: type
    hparams_cls: type
    make_algorithm: Callable[[Any, Any], Algorithm]
    action_spaces: tuple[type, ...]
    presets: dict[str, tuple[dict, dict]] = field(default_factory=dict)
    # Observation spaces the algorithm can learn from: networks need a Box (flattened to a
    # vector), a tabular method needs Discrete states.
    observation_spaces: tuple[type, ...] = (Box,)

    def default_preset(self, family: str, action_space: Any) -> str | None:
        """The preset for an environment: a family made only of continuous-control tasks
        (CONTINUOUS_FAMILIES, e.g. 'brax') gets its own preset when the algorithm has one; other
        continuous actions get 'continuous_control' when the algorithm has it, otherwise the
        environment family's preset if there is one."""
        if isinstance(action_space, Box):
            if family in CONTINUOUS_FAMILIES and family in self.presets:
                return family
            if "continuous_control" in self.presets:
                return "continuous_control"
        return family if family in self.presets else None

    def check_env(self, env: Any) -> None:
        space = env.action_space
        if not isinstance(space, self.action_spaces):
            names = "/".join(t.__name__ for t in self.action_spaces)
            raise ConfigError(
                f"{self.name} supports {names} action spaces, but this environment's actions are "
                f"{type(space).__name__}; pick another algorithm (`rl algos` lists them)."
            )
        obs = env.observation_space
        if not isinstance(obs, self.observation_spaces):
            names = "/".join(t.__name__ for t in self.observation_spaces)
            hint = ("a tabular method such as 'qlearning'" if isinstance(obs, Discrete)
                    else "an algorithm for such observations")
            raise ConfigError(
                f"{self.name} learns from {names} observations, but this environment observes "
                f"{type(obs).__name__}; pick {hint} (`rl algos` lists them)."
            )


ALGORITHMS: dict[str, AlgoSpec] = {
    "ppo": AlgoSpec(
        "ppo", "Proximal Policy Optimization (clipped surrogate, GAE)",
        ppo.PPOConfig, ppo.PPOHParams, ppo.make_algorithm,
        (Discrete, MultiDiscrete, Box), ppo.PRESETS,
    ),
    "dpo": AlgoSpec(
        "dpo", "Discovered Policy Optimisation (PPO's loop with the discovered drift objective)",
        dpo.DPOConfig, dpo.DPOHParams, dpo.make_algorithm,
        (Discrete, MultiDiscrete, Box), dpo.PRESETS,
    ),
    "vpg": AlgoSpec(
        "vpg", "Vanilla Policy Gradient / REINFORCE with a learned value baseline (GAE)",
        vpg.VPGConfig, vpg.VPGHParams, vpg.make_algorithm,
        (Discrete, MultiDiscrete, Box), vpg.PRESETS,
    ),
    "pqn": AlgoSpec(
        "pqn", "Parallelised Q-Network (LayerNorm, Q(lambda), no target network or replay)",
        pqn.PQNConfig, pqn.PQNHParams, pqn.make_algorithm, (Discrete,), pqn.PRESETS,
    ),
    "qlearning": AlgoSpec(
        "qlearning", "Tabular Q-learning, epsilon-greedy, many agents vmapped (discrete states)",
        qlearning.QLearningConfig, qlearning.QLearningHParams, qlearning.make_algorithm,
        (Discrete,), qlearning.PRESETS, observation_spaces=(Discrete,),
    ),
}


def get(name: str) -> AlgoSpec:
    if name not in ALGORITHMS:
        close = difflib.get_close_matches(name.lower(), list(ALGORITHMS), n=3, cutoff=0.4)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown algorithm '{name}'.{hint} Known: {', '.join(ALGORITHMS)}.")
    return ALGORITHMS[name]
