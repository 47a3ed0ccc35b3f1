"""Optimistic resets (`OptimisticResetVectorEnv`): a few resets per step, handed to the
environments whose episode ended in index order, the rest of `AutoReset`'s contract kept (the
true last observation, the action mask of the new episode)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    EpisodeStatistics,
    OptimisticResetVectorEnv,
    TimeStep,
    rollout,
)
from rl_core.spaces import Box, Discrete


class Stamped:
    """Episodes of `length[i]` steps for environment i (its start value's parity picks 2 or 3
    steps, so episodes end at different times); a reset draws a random start value that the
    observation shows, so a reset can be recognised. The action mask allows only action
    `t % 2`: it changes with the step, so it must follow the new episode."""

    observation_space = Box(-np.inf, np.inf, (2,), jnp.float32)
    action_space = Discrete(2)

    def _ts(self, state, reward, done):
        start, t = state
        mask = jnp.arange(2) == t % 2
        obs = jnp.stack([start, t.astype(jnp.float32)])
        return TimeStep(obs, reward, done, jnp.zeros((), jnp.bool_), {"action_mask": mask})

    def reset(self, key):
        state = (jax.random.uniform(key), jnp.zeros((), jnp.int32))
        return state, self._ts(state, jnp.zeros((), jnp.float32), jnp.zeros((), jnp.bool_))

    def step(self, state, action, key):
        start, t = state
        state = (start, t + 1)
        length = jnp.where(start > 0.5, 2, 3)
        return state, self._ts(state, jnp.ones((), jnp.float32), t + 1 >= length)


def test_ended_environments_take_the_few_resets_in_order() -> None:
    """8 environments, ratio 4: two resets per step. Every environment that ended starts from
    one of that step's two resets, the k-th to end from reset k mod 2; the true last
    observation is kept; the mask follows the new episode; the others go on untouched."""
    env = OptimisticResetVectorEnv(Stamped(), 8, reset_ratio=4)
    assert env.num_envs == 8 and env.num_resets == 2
    state, ts = env.reset(jax.random.PRNGKey(0))
    starts = set(np.asarray(ts.observation[:, 0]).tolist())
    assert len(starts) == 8  # the first episodes: one reset each
    step = jax.jit(env.step)
    seen_reset_steps = 0
    for t in range(6):
        prev = ts
        state, ts = step(state, jnp.zeros(8, jnp.int32), jax.random.PRNGKey(t + 1))
        done = np.asarray(ts.terminated)
        np.testing.assert_array_equal(ts.info["final_observation"][:, 0], prev.observation[:, 0])
        np.testing.assert_array_equal(ts.observation[~done], ts.info["final_observation"][~done])
        if done.sum() >= 2:
            seen_reset_steps += 1
            new = np.asarray(ts.observation[done, 0])
            assert np.all(np.asarray(ts.observation[done, 1]) == 0)  # a fresh episode
            # the two resets alternate over the ended environments, in index order
            np.testing.assert_array_equal(new[2::2], new[0])
            np.testing.assert_array_equal(new[3::2], new[1])
            assert new[0] != new[1]
            np.testing.assert_array_equal(ts.info["action_mask"][done],
                                          np.tile([True, False], (done.sum(), 1)))
    assert seen_reset_steps >= 2


def test_ratio_one_resets_every_ended_environment_on_its_own() -> None:
    env = OptimisticResetVectorEnv(Stamped(), 6, reset_ratio=1)
    state, ts = env.reset(jax.random.PRNGKey(1))
    for t in range(3):
        state, ts = env.step(state, jnp.zeros(6, jnp.int32), jax.random.PRNGKey(t + 10))
        done = np.asarray(ts.terminated)
        new = np.asarray(ts.observation[done, 0])
        assert len(set(new.tolist())) == len(new)


def test_it_trains_under_rollout_with_episode_statistics() -> None:
    """Under `rollout` (and with `precompute_resets`, which leaves its resets to it), episode
    returns count each episode's steps: 2 or 3."""
    env = OptimisticResetVectorEnv(EpisodeStatistics(Stamped()), 4, reset_ratio=2)

    def policy(ts, key):
        return jnp.argmax(ts.info["action_mask"], axis=-1), {}

    state, ts = env.reset(jax.random.PRNGKey(2))
    for pre in (False, True):
        _, traj = jax.jit(lambda s, t, k, p=pre: rollout(env, policy, s, t, k, 12,
                                                          precompute_resets=p))(
            state, ts, jax.random.PRNGKey(3))
        returns = np.asarray(traj.info["episode_return"])[np.asarray(traj.terminated)]
        assert returns.size >= 8 and set(returns.tolist()) <= {2.0, 3.0}


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="reset_ratio >= 1"):
        OptimisticResetVectorEnv(Stamped(), 4, reset_ratio=0)
