"""Acting: each algorithm has one `rl_core.Policy`, built by its `make_policy(env, config)` from
the environment and the config alone, which its training rollout acts with and which evaluation
rebuilds from a run's `config.json`. An agent (`rl_core.Agent`) is the parameters plus the
observation statistics the network was trained on, so a saved agent acts as it did in training.

This module holds what the algorithms share: the structure of an Equinox model, the agent inside a
training carry, and the actor-critic policy of PPO, DPO, LPO and VPG."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.distributions import distribution_for
from rl_algos.common.networks import actor_critic_factory, image_part
from rl_algos.common.returns import gae_batch
from rl_core import (
    Agent,
    NormalizeObservation,
    Policy,
    RunningMeanStd,
    find_state,
    flatten_observation,
    normalize_observation,
    rollout,
)


def model_structure(make_model: Callable[[jax.Array], Any]) -> tuple[Any, Any]:
    """`(like, static)` of the Equinox model `make_model(key)` builds, without building it: the
    array leaves as `jax.ShapeDtypeStruct`s, and the rest (`eqx.combine(params, static)`)."""
    return eqx.partition(eqx.filter_eval_shape(make_model, jax.random.PRNGKey(0)),
                         lambda x: isinstance(x, jax.ShapeDtypeStruct))


def flat_size(space: Any) -> int:
    """The length of an observation flattened to one vector (`FlattenObservation`'s)."""
    import numpy as np

    return sum(int(np.prod(s.shape)) for s in jax.tree.leaves(
        space, is_leaf=lambda s: hasattr(s, "shape")))


def obs_norm_like(config: Any, d_obs: int) -> RunningMeanStd | None:
    """The saved observation statistics' structure, when the config normalises observations."""
    if not getattr(config, "normalize_observations", False):
        return None
    # The statistics' shapes (not arrays): a structure to load saved statistics into.
    vec: Any = jax.ShapeDtypeStruct((d_obs,), jnp.float32)
    return RunningMeanStd(vec, vec, jax.ShapeDtypeStruct((), jnp.float32))  # type: ignore[arg-type]


def agent_fn(venv: Any) -> Callable[[Any], Agent]:
    """`carry -> Agent` for a carry that is an `rl_core.RunnerState` over the wrapper stack
    `venv`: the parameters, and the running observation statistics when the stack normalises
    observations (they live in the environment state, updated at every step)."""

    def agent(carry: Any) -> Agent:
        norm = find_state(venv, carry.env_state, NormalizeObservation)
        return Agent(carry.train_state.params, None if norm is None else norm.stats)

    return agent


def prepare_observation(agent: Agent, obs: Any) -> jax.Array:
    """Raw observations `[N, ...]` -> the network's input `[N, D]`: flattened, and normalised
    with the agent's statistics when it has them (in training the wrappers did both already)."""
    x = flatten_observation(obs, 1)
    return x if agent.obs_norm is None else normalize_observation(agent.obs_norm, x)


def actor_critic_model(env: Any, config: Any) -> Callable[[jax.Array], Any]:
    """`key -> ActorCritic` for `env` (its observation flattened) and `config` (hidden_sizes,
    activation, and optionally cnn_part/cnn_channels); an environment with an `actor_size`
    (`rl_core.CentralisedCritic`) gets a decentralised actor and a centralised critic."""
    part = getattr(config, "cnn_part", "")
    return actor_critic_factory(distribution_for(env.action_space), flat_size(
        env.observation_space), config.hidden_sizes, config.activation,
        image_part(env, part) if part else None, getattr(config, "cnn_channels", 0),
        getattr(env, "actor_size", None))


class ActorCriticSetup(NamedTuple):
    """What PPO's family and VPG build before their functions: the standard wrapper stack (with
    the config's normalisers), the action distribution, the model builder and its static part,
    and the acting policy."""

    venv: Any
    dist: Any
    make_model: Callable[[jax.Array], Any]
    static: Any
    policy: Policy


def actor_critic_setup(env: Any, config: Any, num_envs: int) -> ActorCriticSetup:
    """`ActorCriticSetup` for `num_envs` environments of `env` (one device's share when data
    parallel)."""
    from rl_algos.common.envs import make_vector_env

    # A multi-agent config's `reward_shaping_horizon` counts environment steps of the whole
    # run (every device's environments): this stack takes one per `config.num_envs` of them.
    horizon = getattr(config, "reward_shaping_horizon", 0)
    venv = make_vector_env(env, num_envs, normalize_observations=config.normalize_observations,
                           normalize_rewards=config.normalize_rewards,
                           shaping_steps=horizon / config.num_envs)
    make_model = actor_critic_model(env, config)
    return ActorCriticSetup(venv, distribution_for(env.action_space), make_model,
                            model_structure(make_model)[1], actor_critic_policy(env, config))


def act_from_output(dist: Any, out: Any, noise: Any, deterministic: bool,
                    mask: jax.Array | None = None) -> tuple[jax.Array, dict[str, jax.Array]]:
    """An action from a batch of policy outputs `out` (`[N, d_out]`, a Gaussian's with its
    `log_std`) under `dist`, legal under `mask [N, n]` if any: the most probable one if
    `deterministic`, else a sample from `noise`. Extras: its log-probability (and the mask)."""
    p = dist.params(out, mask)
    action = dist.mode(p) if deterministic else dist.sample_with(p, noise)
    extras = {"log_prob": dist.log_prob(p, action)}
    if mask is not None:
        extras["action_mask"] = mask
    return action, extras


def actor_critic_policy(env: Any, config: Any) -> Policy:
    """The policy of the actor-critic methods (PPO, DPO, LPO, VPG): the actor over the flattened
    (and, with saved statistics, normalised) observation. Greedy: the most probable legal action
    (the Gaussian's mean); otherwise a sample from the noise `dist.noise` draws. Extras: the
    action's log-probability and the critic's value (what the on-policy losses need).

    With a centralised critic (`env.actor_size`, `rl_core.CentralisedCritic`) it also acts on
    the environment's own observations `[N, actor_size]` (evaluation, rendering: no global
    state there), with the actor alone and a value of 0."""
    dist: Any = distribution_for(env.action_space)
    make_model = actor_critic_model(env, config)
    params_like, static = model_structure(make_model)
    like = Agent(params_like, obs_norm_like(config, flat_size(env.observation_space)))
    actor_size = getattr(env, "actor_size", None)

    def act(agent: Agent, obs: Any, noise: Any, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        model = eqx.combine(agent.params, static)
        x = prepare_observation(agent, obs)
        if actor_size is not None and x.shape[-1] == actor_size:
            out, value = jax.vmap(model.policy_output)(x), jnp.zeros(x.shape[:1], jnp.float32)
        else:
            out, value = jax.vmap(model)(x)
        action, extras = act_from_output(dist, out, noise, deterministic, mask)
        return action, {**extras, "value": value}

    return Policy(like, act, dist.noise)


def collect_gae_batch(setup: ActorCriticSetup, carry: Any, hp: Any, num_envs: int,
                      num_steps: int) -> tuple[tuple[Any, Any, jax.Array], Any, Any]:
    """One rollout of `num_steps` on the `num_envs` environments of an actor-critic `setup` from
    the training `carry`, the policy sampling among the legal actions, and the rollout as one
    GAE batch (`returns.gae_batch`): `((env_state, timestep, key), traj, batch)`. The start of
    an update of the methods that learn from each rollout once (A2C, VPG)."""
    params, policy = carry.train_state.params, setup.policy

    def act(ts: Any, key: jax.Array) -> tuple[jax.Array, Any]:
        return policy.act(Agent(params), ts.observation, policy.noise(key, (num_envs,)), False,
                          ts.info.get("action_mask"))

    rolled, traj = rollout(setup.venv, act, carry.env_state, carry.timestep, carry.key,
                           num_steps)
    value = eqx.combine(params, setup.static).value
    return rolled, traj, gae_batch(traj, value, hp, num_envs * num_steps)
