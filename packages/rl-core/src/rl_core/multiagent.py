"""The multi-agent port: the single-agent port with an agent axis on every leaf.

A multi-agent environment has a fixed number and order of agents (`num_agents`, `agents`: their
names) and one observation and one action space that every agent shares (an adapter pads agents
whose spaces differ, and masks the padding). Its `reset(key)` and `step(state, actions [A, ...],
key)` return `(state, TimeStep)` as in the single-agent port, each leaf with a leading `[A]` axis:

* `observation` `[A, *observation_space.shape]`; `reward` float32 `[A]`;
* `terminated` and `truncated` bool `[A]`, never both for one agent: an agent that is out (dead
  in SMAX) is terminated; a time limit truncates (a learner bootstraps from it). The episode is
  over when every agent is terminated or truncated (`episode_over`), and rl-core's `AutoReset`
  then starts the next one;
* `info["action_mask"]` bool `[A, n]` (legal actions per agent) where the game has one,
  `info["alive"]` bool `[A]`, and optionally `info["global_state"]` (one array, the state a
  centralised critic sees, `[A, ...]` like every leaf).

The same wrappers serve both ports: `AutoReset` resets on `episode_over`, `EpisodeStatistics`
counts each agent's return (`[A]`; a team's return is their sum), `VectorEnv` adds the `[N]`
axis in front. `check_multiagent_environment` is the contract as a test.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.spaces import Box, Discrete, MultiDiscrete
from rl_core.types import TimeStep


def episode_over(ts: TimeStep) -> jax.Array:
    """bool `[]`: the episode has ended: `terminated | truncated` (single-agent), or every
    agent's (multi-agent, flags `[A]`)."""
    return jnp.all(jnp.logical_or(ts.terminated, ts.truncated))


def agents_as_batch(tree: Any) -> Any:
    """Every leaf `[N, A, ...]` as `[N * A, ...]`: the view in which one parameter-shared
    learner sees each agent of each environment as an actor of its own."""
    return jax.tree.map(lambda x: jnp.reshape(x, (-1, *jnp.shape(x)[2:])), tree)


def agents_from_batch(tree: Any, num_agents: int) -> Any:
    """The inverse of `agents_as_batch`: leaves `[N * A, ...]` back to `[N, A, ...]`."""
    return jax.tree.map(lambda x: jnp.reshape(x, (-1, num_agents, *jnp.shape(x)[1:])), tree)


def _require(cond: Any, msg: str) -> None:
    from rl_core.testing import EnvironmentContractError

    if not bool(cond):
        raise EnvironmentContractError(msg)


def _check_timestep(env: Any, ts: TimeStep, where: str) -> None:
    a = env.num_agents
    _require(isinstance(ts, TimeStep), f"{where}: must return (state, TimeStep), got {type(ts)}")
    _require(jnp.shape(ts.reward) == (a,) and jnp.result_type(ts.reward) == jnp.float32,
             f"{where}: reward must be float32 [{a}] (one per agent), got "
             f"{jnp.result_type(ts.reward)} {jnp.shape(ts.reward)}")
    for name in ("terminated", "truncated"):
        flag = getattr(ts, name)
        _require(jnp.shape(flag) == (a,) and jnp.result_type(flag) == jnp.bool_,
                 f"{where}: {name} must be bool [{a}], got {jnp.result_type(flag)} "
                 f"{jnp.shape(flag)}")
    _require(not bool(jnp.any(ts.terminated & ts.truncated)),
             f"{where}: an agent is both terminated and truncated")
    space = env.observation_space
    _require(isinstance(space, Box), f"observation_space must be one Box every agent shares, "
                                     f"got {type(space).__name__}")
    obs = ts.observation
    _require(jnp.shape(obs) == (a, *space.shape),
             f"{where}: observation must be [{a}, *{space.shape}], got {jnp.shape(obs)}")
    _require(jnp.result_type(obs) == jnp.dtype(space.dtype),
             f"{where}: observation dtype {jnp.result_type(obs)} != space {space.dtype}")
    _require(bool(jnp.all(jax.vmap(space.contains)(obs))),
             f"{where}: an agent's observation is outside observation_space")
    _require(isinstance(ts.info, dict), f"{where}: info must be a dict")
    if "action_mask" in ts.info:
        mask, act = ts.info["action_mask"], env.action_space
        size = act.n if isinstance(act, Discrete) else int(sum(act.nvec))
        _require(jnp.shape(mask) == (a, size) and jnp.result_type(mask) == jnp.bool_,
                 f"{where}: action_mask must be bool [{a}, {size}], got "
                 f"{jnp.result_type(mask)} {jnp.shape(mask)}")
        live = ~(ts.terminated | ts.truncated)
        _require(bool(jnp.all(jnp.any(mask, axis=-1) | ~live)),
                 f"{where}: an agent still in the episode has no legal action")
    if "alive" in ts.info:
        _require(jnp.shape(ts.info["alive"]) == (a,)
                 and jnp.result_type(ts.info["alive"]) == jnp.bool_,
                 f"{where}: info['alive'] must be bool [{a}]")
    for k, v in ts.info.items():
        for leaf in jax.tree.leaves(v):
            _require(jnp.shape(leaf)[:1] == (a,),
                     f"{where}: info[{k!r}] needs the leading agent axis [{a}], got "
                     f"{jnp.shape(leaf)}")


def check_multiagent_environment(env: Any, num_steps: int = 64, seed: int = 0) -> None:
    """Checks, for an unbatched multi-agent environment (see the module docstring):
    * `num_agents` >= 1 and `agents` that many distinct names; one shared Box observation space
      and a Discrete, MultiDiscrete or Box action space;
    * `reset` and `step` run under `jit` and return `(state, TimeStep)` with the agent axis on
      every leaf, the documented dtypes, observations inside the space, no agent both terminated
      and truncated, masks with a legal action for every agent still in the episode;
    * reset starts a live episode with zero rewards, and both are pure (same key, same result);
    * the TimeStep and the state keep their structure, shapes and dtypes from step to step;
    * under `lax.scan` with `AutoReset` and random legal actions for `num_steps` steps, rewards
      and observations stay finite, and it vmaps over keys.
    """
    from rl_core.testing import _tree_equal, check_step_and_rollout

    for attr in ("reset", "step", "observation_space", "action_space", "num_agents", "agents"):
        _require(hasattr(env, attr), f"multi-agent environment lacks `{attr}`")
    a = env.num_agents
    _require(isinstance(a, int) and a >= 1, f"num_agents must be a positive int, got {a!r}")
    _require(len(env.agents) == a and len(set(env.agents)) == a,
             f"agents must be {a} distinct names, got {env.agents!r}")
    act = env.action_space
    _require(isinstance(act, Discrete | MultiDiscrete | Box),
             f"action_space must be Discrete, MultiDiscrete or Box, got {type(act).__name__}")

    def sample(key: jax.Array, ts: TimeStep) -> jax.Array:
        mask = ts.info.get("action_mask")
        keys = jax.random.split(key, a)
        if mask is None:
            return jax.vmap(lambda k: act.sample(k))(keys)
        return jax.vmap(act.sample)(keys, mask)

    key = jax.random.PRNGKey(seed)
    reset = jax.jit(env.reset)
    state, ts = reset(key)
    _check_timestep(env, ts, "reset")
    _require(not bool(jnp.any(ts.terminated | ts.truncated)), "reset returned a finished agent")
    _require(np.all(np.asarray(ts.reward) == 0.0), "reset rewards must be 0")
    state2, ts2 = reset(key)
    _require(_tree_equal(ts, ts2) and _tree_equal(state, state2),
             "reset is not deterministic for a fixed key")

    check_step_and_rollout(env, state, ts, sample, _check_timestep, num_steps, seed,
                           vmapped_reward_shape=(3, a))
