"""Policies with memory: `recurrent_rollout` carries a policy state that the policy resets at
episode starts, `policy_step` steps feed-forward and recurrent policies alike, and
`MaskObservation` hides entries of an observation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    Agent,
    AutoReset,
    Box,
    EpisodeStatistics,
    MaskObservation,
    Policy,
    VectorEnv,
    check_environment,
    initial_policy_state,
    policy_step,
    recurrent_rollout,
    rollout,
)

KEY = jax.random.PRNGKey(5)


def counting_policy(ts, key, count):
    """State: steps seen in the current episode, reset where the timestep begins a new one."""
    first = ts.terminated | ts.truncated
    count = jnp.where(first, 0, count) + 1
    return jnp.zeros(count.shape, jnp.int32), {"count": count, "first": first}, count


def test_recurrent_rollout_resets_the_state_at_episode_starts(make_counter_env) -> None:
    # Episodes of 3 steps (terminated) on env 0; env 1 starts with a state carried from before.
    venv = VectorEnv(AutoReset(EpisodeStatistics(make_counter_env(terminate_at=3))), 2)
    state, ts = venv.reset(KEY)
    count0 = jnp.array([0, 5], jnp.int32)
    (count, _, last_ts, _), traj = jax.jit(
        lambda c, s, t: recurrent_rollout(venv, counting_policy, c, s, t, KEY, 7))(
        count0, state, ts)
    # The reset timestep is not marked first: env 1's carried 5 goes on (6, 7, 8) until the
    # first episode ends; after each end the state restarts at 1.
    np.testing.assert_array_equal(traj.extras["count"][:, 0], [1, 2, 3, 1, 2, 3, 1])
    np.testing.assert_array_equal(traj.extras["count"][:, 1], [6, 7, 8, 1, 2, 3, 1])
    np.testing.assert_array_equal(traj.extras["first"][:, 0], [0, 0, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(count, [1, 1])
    # The rest of the rollout is the feed-forward one's.
    (_, ts_ff, _), traj_ff = rollout(
        venv, lambda t, k: counting_policy(t, k, jnp.zeros(2, jnp.int32))[:2], state, ts, KEY, 7)
    np.testing.assert_array_equal(traj.observation, traj_ff.observation)
    np.testing.assert_array_equal(traj.next_observation, traj_ff.next_observation)
    np.testing.assert_array_equal(last_ts.observation, ts_ff.observation)


def _policies():
    def act(agent, obs, noise, deterministic, mask=None, explore=None):
        return jnp.sum(obs, axis=-1), {}

    def step(agent, state, obs, first, noise, deterministic, mask=None, explore=None):
        state = jnp.where(first, 0.0, state) + jnp.sum(obs, axis=-1)
        return state, {}, state

    like = Agent(None)
    return (Policy(like, act, lambda k, s: k),
            Policy(like, act, lambda k, s: k, lambda n: jnp.zeros((n,)), step))


def test_policy_step_carries_the_state_of_a_recurrent_policy_only() -> None:
    ff, rec = _policies()
    obs = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    assert initial_policy_state(ff, 2) is None
    a, _, s = policy_step(ff, Agent(None), None, obs, jnp.zeros(2, bool), None, True)
    np.testing.assert_array_equal(a, [3.0, 7.0])
    assert s is None
    s = initial_policy_state(rec, 2)
    for expected in ([3.0, 7.0], [6.0, 14.0]):
        a, _, s = policy_step(rec, Agent(None), s, obs, jnp.zeros(2, bool), None, True)
        np.testing.assert_array_equal(a, expected)
    a, _, s = policy_step(rec, Agent(None), s, obs, jnp.array([True, False]), None, True)
    np.testing.assert_array_equal(a, [3.0, 21.0])  # env 0 reset before the step


def test_mask_observation_spaces_and_observations(make_counter_env) -> None:
    class Vec3:
        """obs [t, 10 t, 100 t] in a Box with distinct bounds per entry; ends after 2 steps."""

        observation_space = Box(np.array([0.0, -1.0, -2.0]), np.array([1.0, 10.0, 20.0]), (3,))
        action_space = make_counter_env().action_space

        def __init__(self):
            self.inner = make_counter_env(terminate_at=2)

        def _obs(self, ts):
            t = ts.observation[0] / 100.0
            return ts._replace(observation=jnp.stack([t, 10 * t, 100 * t]))

        def reset(self, key):
            s, ts = self.inner.reset(key)
            return s, self._obs(ts)

        def step(self, s, a, key):
            s, ts = self.inner.step(s, a, key)
            return s, self._obs(ts)

    env = MaskObservation(Vec3(), keep=(2, 0))
    assert env.observation_space.shape == (2,)
    np.testing.assert_array_equal(env.observation_space.low, [-2.0, 0.0])
    np.testing.assert_array_equal(env.observation_space.high, [20.0, 1.0])
    check_environment(env)
    venv = VectorEnv(AutoReset(env), 3)
    state, ts = venv.reset(KEY)
    state, ts = venv.step(state, jnp.zeros(3, jnp.int32), KEY)
    np.testing.assert_allclose(ts.observation, [[1.0, 0.01]] * 3, rtol=1e-6)
    state, ts = venv.step(state, jnp.zeros(3, jnp.int32), KEY)  # episodes end: reset obs
    np.testing.assert_allclose(ts.observation, [[0.0, 0.0]] * 3)
    np.testing.assert_allclose(ts.info["final_observation"], [[2.0, 0.02]] * 3, rtol=1e-6)
    # Above VectorEnv it masks the last axis of the batch alike.
    above = MaskObservation(VectorEnv(Vec3(), 3), keep=(1,))
    _, ts = above.reset(KEY)
    assert ts.observation.shape == (3, 1)
    with pytest.raises(ValueError, match="distinct indices"):
        MaskObservation(Vec3(), keep=(0, 3))
    with pytest.raises(ValueError, match="distinct indices"):
        MaskObservation(Vec3(), keep=(1, 1))
