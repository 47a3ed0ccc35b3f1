"""How an algorithm declares itself: one `AlgoSpec` in its folder's `spec.py` (an
`rl_core.AlgorithmSpec`), read by the registry, the CLI and the contract checks.

The declaration holds everything the rest of the framework needs to know about an algorithm:
* its settings: the config dataclass of *static* fields (they shape the compiled program) and the
  `@hparams` class of *traced* ones (inputs of `train(key, hparams)`, vmappable in a sweep);
* its presets, as data: a `Preset` per environment family (`rl_core.FAMILIES`, the names the
  adapters give their environments), chosen by `default_preset`;
* its capabilities (action and observation spaces, data parallelism, masks, an evolved field);
* `extends`: the one algorithm whose folder it may import (DPO and LPO put their objective into
  PPO's loop through `ppo.make_algorithm(objective=...)`, recurrent PPO reuses PPO's loss and
  config). Everything else two algorithms share lives in `rl_algos.common`; a test over the imports
  (`tests/test_algorithm_contract.py`) holds every folder to that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rl_algos.common.config import ConfigError
from rl_core import CONTINUOUS_FAMILIES, FAMILIES, Algorithm, Box, Discrete, MultiDiscrete, Policy

ANY_ACTION = (Discrete, MultiDiscrete, Box)


def game_model(env: Any, algo: str) -> Any:
    """The environment's game as the turn-based port (`rl_core.TurnBasedGame`, from its
    `game_model()`), which planner `algo` searches with; a ConfigError naming the environments
    that have one otherwise."""
    make = getattr(env, "game_model", None)
    game = None if make is None else make()
    if game is None:
        raise ConfigError(
            f"{algo} plans with the game's rules, and this environment gives none "
            "(game_model()); train it on a two-player board game without chance such as "
            "pgx/tic_tac_toe or pgx/connect_four, or pick another algorithm.")
    return game


class Preset(NamedTuple):
    """Defaults for one environment family, under the user's own `--set` and `--env-arg`:
    `config` overrides static fields, `hparams` traced ones, `env` the environment's keywords
    (where the game takes them, e.g. a board game's opponent)."""

    config: Mapping[str, Any] = {}
    hparams: Mapping[str, Any] = {}
    env: Mapping[str, Any] = {}


@dataclass(frozen=True)
class AlgoSpec:
    """One algorithm's declaration.

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
    presets: Mapping[str, Preset] = field(default_factory=dict)
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
    # The registered algorithm whose folder this one builds on (see the module docstring).
    extends: str | None = None
    # Trains environments of the multi-agent port (`rl_core.multiagent`), and only those.
    multi_agent: bool = False
    # A planner searches with the game's rules as its model: the environment must give
    # `game_model()`, a `rl_core.TurnBasedGame` (pgx's board games), and its training plays that
    # game. `make_planner(env, config, simulations=None) -> plan(agent, game_state, key) ->
    # action` is its play with search (`rl arena`; None: the config's simulation count); its
    # `make_policy` acts without search, on the environment, as every algorithm's policy does
    # (evaluation, rendering). None for all other algorithms.
    make_planner: Callable[..., Callable[..., Any]] | None = None
    # Learns in self-play environments (`self_play`: one policy plays every seat of a game),
    # negating the next position's values where `info["turn_sign"]` is -1 (negamax).
    self_play: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.presets) - FAMILIES)
        if unknown:
            raise ValueError(f"{self.name}: presets {unknown} name no environment family; "
                             f"known: {sorted(FAMILIES)}")
        if (self.meta_field is None) != (self.meta_init is None):
            raise ValueError(f"{self.name}: meta_field and meta_init go together")

    @property
    def planner(self) -> bool:
        return self.make_planner is not None

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
        (`rl_core.CONTINUOUS_FAMILIES`, e.g. 'brax') gets its own preset when the algorithm has
        one; other continuous actions get 'continuous_control' when the algorithm has it,
        otherwise the environment family's preset if there is one."""
        continuous_only = tuple(self.action_spaces) == (Box,)
        if continuous_only and family in self.presets:
            return family
        if isinstance(action_space, Box):
            if family in CONTINUOUS_FAMILIES and family in self.presets:
                return family
            if "continuous_control" in self.presets:
                return "continuous_control"
        return family if family in self.presets else None

    def check_env(self, env: Any, multi_agent_names: Sequence[str] = ()) -> None:
        """Refuses, in one line saying what fits, an environment this algorithm cannot train;
        `multi_agent_names` (the registry's `multi_agent_names()`) are named for a multi-agent
        environment given to a single-agent algorithm."""
        agents = getattr(env, "num_agents", None)  # the multi-agent port's (rl_core.multiagent)
        if agents is not None and not self.multi_agent:
            fits = (" or ".join(f"'{n}'" for n in multi_agent_names) if multi_agent_names
                    else "a multi-agent algorithm")
            raise ConfigError(
                f"{self.name} trains single-agent environments, and this one has {agents} agents "
                f"(the multi-agent port); train it with {fits}, or pick a single-agent "
                "environment (`rl envs` lists them).")
        if agents is None and self.multi_agent:
            raise ConfigError(
                f"{self.name} trains multi-agent environments (such as jaxmarl/...), and this one "
                "has a single agent; train it with a single-agent algorithm such as 'ppo', or "
                "pick a multi-agent environment (`rl envs` lists them).")
        if self.planner:
            game_model(env, self.name)
        if getattr(env, "self_play", False) and not self.self_play:
            if self.planner:
                raise ConfigError(f"{self.name} trains by self-play on the game's rules already; "
                                  "drop opponent=self (the opponent is then only its yardstick).")
            raise ConfigError(
                f"{self.name} does not learn in self-play (opponent=self: its returns would not "
                "negate the other player's values); train it against a built-in opponent, or "
                "use 'ppo', 'dpo', 'lpo' or 'pqn' for self-play.")
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
