"""The multi-agent port: a small cooperative game checked by `check_multiagent_environment`,
the contract's failures named for broken variants, the shared wrappers over the agent axis
(AutoReset on `episode_over`, per-agent returns from EpisodeStatistics, VectorEnv), the
agents-as-batch view, and the centralised critic's observation."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    AgentsAsBatch,
    AutoReset,
    Box,
    CentralisedCritic,
    Discrete,
    EnvironmentContractError,
    EpisodeStatistics,
    TimeStep,
    VectorEnv,
    agents_as_batch,
    agents_from_batch,
    check_multiagent_environment,
    episode_over,
)


class MatchState(NamedTuple):
    target: jax.Array  # int32 [], the action both agents are rewarded for
    t: jax.Array  # int32 [], steps so far
    out: jax.Array  # bool [A], agents that have left the game


class MatchGame:
    """A cooperative game of `num_agents` agents for 8 steps: every agent sees the target (one
    hot) and its own id; each agent that picks the target gets +1 while it plays. Agent 0 leaves
    (terminated) after its first miss; the others are truncated at step 8; action 2 is illegal
    for agent 1."""

    def __init__(self, num_agents: int = 3, horizon: int = 8):
        self.num_agents, self.horizon = num_agents, horizon
        self.agents = tuple(f"agent_{i}" for i in range(num_agents))
        self.observation_space = Box(0.0, 1.0, (3 + num_agents,), jnp.float32)
        self.action_space = Discrete(3)

    def _timestep(self, s: MatchState, reward, terminated, truncated) -> TimeStep:
        obs = jnp.concatenate([jnp.broadcast_to(jax.nn.one_hot(s.target, 3), (self.num_agents, 3)),
                               jnp.eye(self.num_agents)], axis=1)
        mask = jnp.ones((self.num_agents, 3), jnp.bool_).at[1, 2].set(False)
        return TimeStep(obs, reward, terminated, truncated,
                        {"action_mask": mask, "alive": ~s.out})

    def reset(self, key):
        s = MatchState(jax.random.randint(key, (), 0, 2), jnp.zeros((), jnp.int32),
                       jnp.zeros((self.num_agents,), jnp.bool_))
        zeros = jnp.zeros((self.num_agents,), jnp.bool_)
        return s, self._timestep(s, jnp.zeros((self.num_agents,), jnp.float32), zeros, zeros)

    def step(self, s: MatchState, actions, key):
        hit = (actions == s.target) & ~s.out
        reward = hit.astype(jnp.float32)
        out = s.out | ((jnp.arange(self.num_agents) == 0) & ~hit)
        t = s.t + 1
        terminated = out
        truncated = (t >= self.horizon) & ~out
        nxt = MatchState(jax.random.randint(key, (), 0, 2), t, out)
        return nxt, self._timestep(nxt, reward, terminated, truncated)


def test_a_cooperative_game_keeps_the_contract() -> None:
    check_multiagent_environment(MatchGame())


class _NoAgentAxisReward(MatchGame):
    def step(self, s, actions, key):
        s, ts = super().step(s, actions, key)
        return s, ts._replace(reward=ts.reward.sum())


class _BothFlags(MatchGame):
    def step(self, s, actions, key):
        s, ts = super().step(s, actions, key)
        return s, ts._replace(truncated=ts.terminated)


class _AgentsMissing(MatchGame):
    def __init__(self):
        super().__init__()
        self.agents = ("a", "a", "b")


class _FlatMask(MatchGame):
    def _timestep(self, s, reward, terminated, truncated):
        ts = super()._timestep(s, reward, terminated, truncated)
        return ts._replace(info={**ts.info, "action_mask": ts.info["action_mask"][0]})


@pytest.mark.parametrize("env, words", [
    (_NoAgentAxisReward(), "reward must be float32 \\[3\\]"),
    (_BothFlags(), "both terminated and truncated"),
    (_AgentsMissing(), "distinct names"),
    (_FlatMask(), "action_mask must be bool \\[3, 3\\]"),
])
def test_broken_environments_are_named(env, words: str) -> None:
    with pytest.raises(EnvironmentContractError, match=words):
        check_multiagent_environment(env)


def test_wrappers_work_over_the_agent_axis() -> None:
    """Four games, every agent always picking action 0: agent 0 leaves at its first miss, the
    episode ends at step 8 (every agent out or truncated) and AutoReset starts the next; the
    per-agent returns of the finished episode are each agent's hits."""
    env = VectorEnv(AutoReset(EpisodeStatistics(MatchGame())), 4)
    state, ts = env.reset(jax.random.PRNGKey(0))
    assert ts.info["episode_return"].shape == (4, 3) and ts.reward.shape == (4, 3)
    actions = jnp.zeros((4, 3), jnp.int32)
    returns, hits = None, jnp.zeros((4, 3))
    out = jnp.zeros((4, 3), jnp.bool_)
    for t in range(8):
        target_was_0 = ts.observation[:, 0, 0] == 1.0
        state, ts = jax.jit(env.step)(state, actions, jax.random.PRNGKey(t + 1))
        hits = hits + jnp.where(out, 0.0, target_was_0[:, None].astype(jnp.float32))
        out = out | ((jnp.arange(3) == 0) & ~target_was_0[:, None])
        if t < 7:
            assert not np.any(np.asarray(jax.vmap(episode_over)(ts)))
        returns = ts.info["episode_return"]
    assert np.all(np.asarray(jax.vmap(episode_over)(ts)))
    np.testing.assert_array_equal(np.asarray(returns), np.asarray(hits))
    assert np.all(np.asarray(ts.info["alive"]))  # the next episode has begun


def test_agents_as_batch_round_trips() -> None:
    x = {"obs": jnp.arange(4 * 3 * 5).reshape(4, 3, 5), "r": jnp.arange(12.0).reshape(4, 3)}
    flat = agents_as_batch(x)
    assert flat["obs"].shape == (12, 5) and flat["r"].shape == (12,)
    np.testing.assert_array_equal(flat["obs"][4], x["obs"][1, 1])  # env 1, agent 1
    back = agents_from_batch(flat, 3)
    for k in x:
        np.testing.assert_array_equal(back[k], x[k])


def test_agents_as_batch_wrapper_gives_one_actor_per_agent() -> None:
    """Four games of three agents seen as 12 actors (environment-major): observations, rewards
    and flags per agent, actions taken per actor, an environment's counters repeated for its
    agents, and every agent's `episode_return` the team's (the sum of its agents' returns)
    while `agent_episode_return` keeps its own; the same returns as the stack without it."""
    inner = VectorEnv(AutoReset(EpisodeStatistics(MatchGame())), 4)
    env = AgentsAsBatch(inner)
    assert env.num_envs == 12 and env.num_agents == 3
    state, ts = env.reset(jax.random.PRNGKey(0))
    _, ref = inner.reset(jax.random.PRNGKey(0))
    assert ts.observation.shape == (12, 6) and ts.info["action_mask"].shape == (12, 3)
    actions = jnp.tile(jnp.array([0, 1, 0]), 4)  # agent 1 always picks 1, the others 0
    ref_state = state
    for t in range(8):
        key = jax.random.PRNGKey(t + 1)
        state, ts = jax.jit(env.step)(state, actions, key)
        ref_state, ref = jax.jit(inner.step)(ref_state, actions.reshape(4, 3), key)
        np.testing.assert_array_equal(ts.reward, ref.reward.reshape(12))
        np.testing.assert_array_equal(ts.terminated, ref.terminated.reshape(12))
        np.testing.assert_array_equal(ts.info["agent_episode_return"],
                                      ref.info["episode_return"].reshape(12))
        team = ref.info["episode_return"].sum(axis=1)
        np.testing.assert_array_equal(ts.info["episode_return"], jnp.repeat(team, 3))
        np.testing.assert_array_equal(ts.info["episode_length"],
                                      jnp.repeat(ref.info["episode_length"], 3))
    assert np.all(np.asarray(ts.truncated | ts.terminated))  # step 8: every episode over


class _WithGlobalState(MatchGame):
    """MatchGame with `info["global_state"]` `[A, 2]`: the target and the step, per agent."""

    def _timestep(self, s, reward, terminated, truncated):
        ts = super()._timestep(s, reward, terminated, truncated)
        g = jnp.stack([s.target, s.t]).astype(jnp.float32)
        return ts._replace(info={**ts.info, "global_state": jnp.tile(g, (self.num_agents, 1))})


def test_centralised_critic_appends_every_observation_and_the_agent_id() -> None:
    """Without a global state in the info: agent a observes its own observation, then every
    agent's in agent order, then its one-hot id; the result keeps the port's contract."""
    game = MatchGame()
    env = CentralisedCritic(game)
    d, a = 6, 3
    assert env.actor_size == d and env.observation_space.shape == (d + a * d + a,)
    _, raw = game.reset(jax.random.PRNGKey(1))
    _, ts = env.reset(jax.random.PRNGKey(1))
    for i in range(a):
        np.testing.assert_array_equal(ts.observation[i, :d], raw.observation[i])
        np.testing.assert_array_equal(ts.observation[i, d:d + a * d], raw.observation.reshape(-1))
        np.testing.assert_array_equal(ts.observation[i, d + a * d:], np.eye(a)[i])
    check_multiagent_environment(env)


def test_centralised_critic_takes_the_environments_global_state() -> None:
    env = CentralisedCritic(_WithGlobalState())
    assert env.observation_space.shape == (6 + 2 + 3,)
    state, _ = env.reset(jax.random.PRNGKey(2))
    state, ts = env.step(state, jnp.zeros(3, jnp.int32), jax.random.PRNGKey(3))
    np.testing.assert_array_equal(ts.observation[:, 6:8],
                                  np.tile([float(state.target), 1.0], (3, 1)))
    check_multiagent_environment(env)
