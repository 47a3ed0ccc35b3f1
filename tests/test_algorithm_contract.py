"""The algorithm contract (`rl_core.check_algorithm`) over every registered algorithm, on every
action-space kind it declares, parametrised from the registry: an algorithm added to
`rl_algos.ALGORITHMS` is checked here without editing this file. Algorithms whose config can
normalise observations are also checked with normalisation on (the saved statistics must make
the evaluation policy act as training did)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import rl_algos
import rl_envs
from rl_algos import Preset
from rl_algos.common.config import BatchConfig, ConfigError, MinibatchConfig
from rl_algos.registry import FOLDERS
from rl_core import (
    FAMILIES,
    Box,
    Discrete,
    MultiDiscrete,
    TimeStep,
    check_algorithm,
    check_environment,
    check_multiagent_environment,
)


class MaskedMultiDiscreteEnv:
    """A small MultiDiscrete((3, 2)) task with a per-dimension legal-action mask that changes
    with time (dimension 0: values t % 3 and (t + 1) % 3 legal), truncated after 6 steps."""

    observation_space = Box(0.0, 1.0, (3,))
    action_space = MultiDiscrete((3, 2))

    def _ts(self, t, reward, truncated):
        phase = t % 3
        mask0 = (jnp.arange(3) == phase) | (jnp.arange(3) == (phase + 1) % 3)
        mask = jnp.concatenate([mask0, jnp.ones(2, jnp.bool_)])
        obs = jax.nn.one_hot(phase, 3, dtype=jnp.float32)
        return TimeStep(obs, reward, jnp.zeros((), jnp.bool_), truncated, {"action_mask": mask})

    def reset(self, key):
        t = jnp.zeros((), jnp.int32)
        return t, self._ts(t, jnp.zeros((), jnp.float32), jnp.zeros((), jnp.bool_))

    def step(self, t, action, key):
        reward = (action[1] == 0).astype(jnp.float32)
        t = t + 1
        return t, self._ts(t, reward, t >= 6)


class Agents:
    """The multi-agent port over `num_agents` copies of a single-agent environment, one per
    agent, in lockstep: an agent whose copy ended stays out (its flags kept, its rewards 0, its
    copy no longer stepped) until every agent is out."""

    def __init__(self, env, num_agents: int = 2):
        self.env, self.num_agents = env, num_agents
        self.agents = tuple(f"agent_{i}" for i in range(num_agents))
        self.observation_space, self.action_space = env.observation_space, env.action_space

    def reset(self, key):
        state, ts = jax.vmap(self.env.reset)(jax.random.split(key, self.num_agents))
        return (state, ts), ts

    def step(self, carry, actions, key):
        state, last = carry
        out = last.terminated | last.truncated
        new_state, ts = jax.vmap(self.env.step)(state, actions,
                                                jax.random.split(key, self.num_agents))

        def keep(new, old):
            return jnp.where(out.reshape(out.shape + (1,) * (new.ndim - 1)), old, new)

        ts = jax.tree.map(keep, ts, last)._replace(reward=jnp.where(out, 0.0, ts.reward))
        return (jax.tree.map(keep, new_state, state), ts), ts


ENV_IDS = ("gymnax/CartPole-v1", "gymnax/Pendulum-v1", "native/GridWorld")


def env_for(spec, kind):
    """The first candidate environment with actions of `kind` that the algorithm learns from
    (for a multi-agent algorithm, two agents each with a copy of it; for a planner, a board game
    with its game model)."""
    if spec.multi_agent:
        return Agents(env_for(dataclasses.replace(spec, multi_agent=False), kind))
    if spec.planner:  # the smallest game with a model
        return rl_envs.make("pgx/tic_tac_toe")
    if kind is MultiDiscrete:
        return MaskedMultiDiscreteEnv()
    for env_id in ENV_IDS:
        env = rl_envs.make(env_id)
        if isinstance(env.action_space, kind) and isinstance(env.observation_space,
                                                             spec.observation_spaces):
            return env
    raise AssertionError(f"no test environment with {kind.__name__} actions for {spec.name}")


def small(config):
    """The smallest program that still exercises all the contract checks: an on-policy batch of
    4 environments x 16 steps, learnt from (where the algorithm uses minibatches) in 2 epochs of
    2 shuffled minibatches. Off-policy configurations are kept as declared."""
    if not isinstance(config, BatchConfig):
        return config
    changes = dict(num_envs=4, num_steps=16)
    if isinstance(config, MinibatchConfig):
        changes |= dict(num_epochs=2, num_minibatches=2)
    return dataclasses.replace(config, **changes)


def normalises(spec) -> bool:
    """The algorithm's settings have `normalize_observations` and it accepts True."""
    if "normalize_observations" not in {f.name for f in dataclasses.fields(spec.config_cls)}:
        return False
    try:
        spec.config_cls(normalize_observations=True).validate()
    except ConfigError:
        return False
    return True


CASES = [(name, kind, False) for name, spec in rl_algos.ALGORITHMS.items()
         for kind in spec.action_spaces]
CASES += [(name, Box, True) for name, spec in rl_algos.ALGORITHMS.items()
          if Box in spec.action_spaces and normalises(spec)]


@pytest.mark.parametrize(("name", "kind", "normalised"), CASES,
                         ids=[f"{n}-{k.__name__}{'-normobs' if z else ''}" for n, k, z in CASES])
def test_check_algorithm(name, kind, normalised) -> None:
    spec = rl_algos.get(name)
    config = spec.config_cls(normalize_observations=True) if normalised else spec.config_cls()
    check_algorithm(spec, env_for(spec, kind), small(config))


def test_multidiscrete_test_env_keeps_the_port() -> None:
    check_environment(MaskedMultiDiscreteEnv())


@pytest.mark.parametrize("env", [MaskedMultiDiscreteEnv(), rl_envs.make("gymnax/Pendulum-v1")],
                         ids=["multidiscrete", "box"])
def test_the_multi_agent_test_env_keeps_the_port(env) -> None:
    check_multiagent_environment(Agents(env))


@pytest.mark.parametrize("name", list(rl_algos.ALGORITHMS))
def test_declared_capabilities_match_the_code(name) -> None:
    """`data_parallel` is declared exactly when `make_algorithm` takes a `data_axis`, and every
    preset is keyed by an environment family that `rl_envs.family` gives (or
    'continuous_control')."""
    spec = rl_algos.get(name)
    takes_axis = "data_axis" in inspect.signature(spec.make_algorithm).parameters
    assert spec.data_parallel == takes_axis
    assert set(spec.presets) <= FAMILIES


def test_the_adapters_and_the_presets_share_one_family_vocabulary() -> None:
    """Every family an adapter gives is one of `rl_core.FAMILIES`, and every name there but
    'continuous_control' (the presets' name for Box-action tasks) is some environment's."""
    families = {rl_envs.family(env_id) for env_id in rl_envs.all_ids()}
    assert families <= FAMILIES, families - FAMILIES
    assert FAMILIES - {"continuous_control"} <= families, (
        FAMILIES - {"continuous_control"} - families)


def _algos_imported(path: Path) -> set[str]:
    """The `rl_algos.<folder>` packages that a source file imports (absolute imports only: the
    package uses no relative ones, which this test would also need to read)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            mods = [node.module or ""]
            if node.module == "rl_algos":
                mods = [f"rl_algos.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        else:
            continue
        names |= {m.split(".")[1] for m in mods if m.startswith("rl_algos.")}
    return names


@pytest.mark.parametrize("folder", FOLDERS)
def test_an_algorithm_imports_no_sibling(folder) -> None:
    """An algorithm folder imports rl_core, `rl_algos.common` and, when its spec declares that it
    `extends` one, that algorithm's folder: nothing else of the registry's, so a change to one
    algorithm cannot break another behind its back."""
    spec = importlib.import_module(f"rl_algos.{folder}.spec").SPEC
    allowed = {"common", folder} | ({spec.extends} if spec.extends else set())
    assert spec.extends is None or spec.extends in FOLDERS
    root = Path(rl_algos.__file__).parent / folder
    for path in sorted(root.rglob("*.py")):
        stray = _algos_imported(path) - allowed
        assert not stray, f"{path.relative_to(root.parent)} imports the sibling(s) {sorted(stray)}"


def test_the_shared_blocks_import_no_algorithm() -> None:
    root = Path(rl_algos.__file__).parent / "common"
    for path in sorted(root.rglob("*.py")):
        assert _algos_imported(path) <= {"common"}, path


def test_a_misspelt_preset_family_is_refused() -> None:
    spec = rl_algos.get("ppo")
    with pytest.raises(ValueError, match="name no environment family"):
        dataclasses.replace(spec, presets={"clasic_control": Preset()})


def test_check_algorithm_catches_a_training_policy_that_differs() -> None:
    """The check fails when the rollout acts with another policy than `make_policy`'s."""
    from rl_core import AlgorithmContractError

    spec = rl_algos.get("pqn")
    real = spec.make_policy

    def other_policy(env, config):
        pol = real(env, config)

        def act(agent, obs, noise, deterministic, mask=None, explore=None):
            action, extras = pol.act(agent, obs, noise, deterministic, mask, explore)
            return (action + 1) % env.action_space.n, extras

        return pol._replace(act=act)

    broken = dataclasses.replace(spec, make_policy=other_policy)
    with pytest.raises(AlgorithmContractError, match="acts differently"):
        check_algorithm(broken, rl_envs.make("gymnax/CartPole-v1"))


def test_discrete_space_has_a_test_env() -> None:
    assert isinstance(env_for(rl_algos.get("qlearning"), Discrete).observation_space, Discrete)
