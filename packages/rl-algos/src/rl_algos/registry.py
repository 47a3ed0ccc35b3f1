"""The algorithm registry: a plain dict from name to `AlgoSpec`. An algorithm declares what it
can do (action and observation spaces, data parallelism, legal-action masks, an evolved meta
field); the CLI reads these declarations and refuses a mismatch before anything compiles.

Adding an algorithm is its folder (config, networks, losses, `make_algorithm`, `make_policy`) and
one entry below; `tests/test_algorithm_contract.py` then checks it on every action-space kind it
declares (`rl_core.check_algorithm`)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rl_algos import dpo, dqn, lpo, ppo, ppo_rnn, pqn, pqn_rnn, qlearning, sac, td3, vpg
from rl_algos.common.config import ConfigError
from rl_algos.common.policy import actor_critic_policy
from rl_core import Algorithm, Box, Discrete, MultiDiscrete, Policy

# Environment families whose every task has continuous actions: their own preset (tuned for that
# family) takes precedence over the generic 'continuous_control' one. Mixed families such as
# gymnax's 'classic_control' (CartPole and Pendulum) are not listed: their preset is for the
# discrete tasks.
CONTINUOUS_FAMILIES = frozenset({"brax"})
# The names a preset may have: the environment families `rl_envs.family` gives (a test checks
# that they are all real), plus 'continuous_control' for any Box-action task. A preset under
# another name would never be chosen, so a misspelt one is an error when the registry loads.
PRESET_FAMILIES = frozenset({"classic_control", "minatar", "bsuite", "misc", "brax", "jumanji",
                             "jumanji_snake", "board_game", "tabular", "continuous_control"})


@dataclass(frozen=True)
class AlgoSpec:
    """One registered algorithm (an `rl_core.AlgorithmSpec`).

    make_algorithm: `(env, config[, data_axis]) -> Algorithm`; takes `data_axis` exactly when
                    `data_parallel` is declared.
    make_policy:    `(env, config) -> Policy`, the acting path of training and evaluation.
    """

    name: str
    description: str
    config_cls: type
    hparams_cls: type
    make_algorithm: Callable[..., Algorithm]
    make_policy: Callable[[Any, Any], Policy]
    action_spaces: tuple[type, ...]
    presets: dict[str, tuple[dict, dict]] = field(default_factory=dict)
    # Observation spaces the algorithm can learn from: networks need a Box (flattened to a
    # vector), a tabular method needs Discrete states.
    observation_spaces: tuple[type, ...] = (Box,)
    # One agent's environments split over a host's devices, gradients averaged (`--data-parallel`).
    data_parallel: bool = False
    # Acting and learning respect `info["action_mask"]` (board games, Jumanji).
    action_masks: bool = True
    # The hparams field that holds evolved meta-parameters (`rl run --meta-params FILE`), the
    # `rl evolve --meta` target that writes such files, and `key -> meta-parameters` to use when
    # none are given (contract checks, smoke tests); None for algorithms without one.
    meta_field: str | None = None
    meta_target: str | None = None
    meta_init: Callable[[Any], Any] | None = None
    # Environment keyword defaults per preset (under the user's own), where the game takes them.
    env_presets: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.presets) - PRESET_FAMILIES)
        if unknown:
            raise ValueError(f"{self.name}: presets {unknown} name no environment family; "
                             f"known: {sorted(PRESET_FAMILIES)}")
        if (self.meta_field is None) != (self.meta_init is None):
            raise ValueError(f"{self.name}: meta_field and meta_init go together")

    def default_hparams(self) -> Any:
        """The hparams class's defaults, with fresh meta-parameters in the meta field."""
        hp = self.hparams_cls()
        if self.meta_field is not None and self.meta_init is not None:
            import jax

            hp = hp._replace(**{self.meta_field: self.meta_init(jax.random.PRNGKey(0))})
        return hp

    def default_preset(self, family: str, action_space: Any) -> str | None:
        """The preset for an environment. An algorithm for continuous actions only (TD3) keys every
        preset by family, so its own family preset comes first (Pendulum gets TD3's
        'classic_control'). Otherwise a family made only of continuous-control tasks
        (CONTINUOUS_FAMILIES, e.g. 'brax') gets its own preset when the algorithm has one; other
        continuous actions get 'continuous_control' when the algorithm has it, otherwise the
        environment family's preset if there is one."""
        continuous_only = tuple(self.action_spaces) == (Box,)
        if continuous_only and family in self.presets:
            return family
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


ANY_ACTION = (Discrete, MultiDiscrete, Box)

ALGORITHMS: dict[str, AlgoSpec] = {
    "ppo": AlgoSpec(
        "ppo", "Proximal Policy Optimization (clipped surrogate, GAE)",
        ppo.PPOConfig, ppo.PPOHParams, ppo.make_algorithm, actor_critic_policy, ANY_ACTION,
        ppo.PRESETS, data_parallel=True,
    ),
    "ppo_rnn": AlgoSpec(
        "ppo_rnn", "Recurrent PPO (a GRU core; for partially observed tasks)",
        ppo_rnn.PPORNNConfig, ppo.PPOHParams, ppo_rnn.make_algorithm, ppo_rnn.make_policy,
        ANY_ACTION, ppo_rnn.PRESETS,
    ),
    "dpo": AlgoSpec(
        "dpo", "Discovered Policy Optimisation (PPO's loop with the discovered drift objective)",
        dpo.DPOConfig, dpo.DPOHParams, dpo.make_algorithm, actor_critic_policy, ANY_ACTION,
        dpo.PRESETS, data_parallel=True,
    ),
    "lpo": AlgoSpec(
        "lpo", "Learned Policy Optimisation (PPO's loop with a drift evolved by `rl evolve`)",
        lpo.LPOConfig, lpo.LPOHParams, lpo.make_algorithm, actor_critic_policy, ANY_ACTION,
        lpo.PRESETS, data_parallel=True, meta_field="drift", meta_target="drift",
        meta_init=lpo.init_drift,
    ),
    "vpg": AlgoSpec(
        "vpg", "Vanilla Policy Gradient / REINFORCE with a learned value baseline (GAE)",
        vpg.VPGConfig, vpg.VPGHParams, vpg.make_algorithm, actor_critic_policy, ANY_ACTION,
        vpg.PRESETS,
    ),
    "pqn": AlgoSpec(
        "pqn", "Parallelised Q-Network (LayerNorm, Q(lambda), no target network or replay)",
        pqn.PQNConfig, pqn.PQNHParams, pqn.make_algorithm, pqn.make_policy, (Discrete,),
        pqn.PRESETS, env_presets=pqn.ENV_PRESETS,
    ),
    "pqn_rnn": AlgoSpec(
        "pqn_rnn", "Recurrent PQN (a GRU before the Q head; for partially observed tasks)",
        pqn_rnn.PQNRNNConfig, pqn.PQNHParams, pqn_rnn.make_algorithm, pqn_rnn.make_policy,
        (Discrete,), pqn_rnn.PRESETS,
    ),
    "dqn": AlgoSpec(
        "dqn", "Deep Q-Network (replay, target network, Double DQN targets, n-step, dueling)",
        dqn.DQNConfig, dqn.DQNHParams, dqn.make_algorithm, dqn.make_policy, (Discrete,),
        dqn.PRESETS,
    ),
    "qlearning": AlgoSpec(
        "qlearning", "Tabular Q-learning, epsilon-greedy, many agents vmapped (discrete states)",
        qlearning.QLearningConfig, qlearning.QLearningHParams, qlearning.make_algorithm,
        qlearning.make_policy, (Discrete,), qlearning.PRESETS, observation_spaces=(Discrete,),
        action_masks=False,
    ),
    "td3": AlgoSpec(
        "td3", "Twin Delayed DDPG (twin critics, target smoothing, delayed actor, replay buffer)",
        td3.TD3Config, td3.TD3HParams, td3.make_algorithm, td3.make_policy, (Box,), td3.PRESETS,
        action_masks=False,
    ),
    "sac": AlgoSpec(
        "sac", "Soft Actor-Critic (squashed Gaussian, twin critics, learned temperature, replay)",
        sac.SACConfig, sac.SACHParams, sac.make_algorithm, sac.make_policy, (Box,), sac.PRESETS,
        action_masks=False,
    ),
}


def get(name: str) -> AlgoSpec:
    if name not in ALGORITHMS:
        close = difflib.get_close_matches(name.lower(), list(ALGORITHMS), n=3, cutoff=0.4)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown algorithm '{name}'.{hint} Known: {', '.join(ALGORITHMS)}.")
    return ALGORITHMS[name]
