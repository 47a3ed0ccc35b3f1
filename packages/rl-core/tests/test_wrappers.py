"""Wrappers on the hand-written CounterEnv (see conftest.py): obs `[t, offset]`, reward
`action + 1`, termination at `terminate_at`, truncation at `time_limit`, action 1 illegal on odd t
when masked."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    AnnealedRewardShaping,
    AutoReset,
    Box,
    ClipAction,
    Discrete,
    EpisodeStatistics,
    FlattenObservation,
    FlattenStructuredObservation,
    NormalizeObservation,
    NormalizeReward,
    TimeStep,
    VectorEnv,
    find_state,
    flatten_observation,
)

KEY = jax.random.PRNGKey(42)


def _scan_actions(env, actions):
    """Resets with KEY and steps through `actions` in one compiled scan; returns the reset
    TimeStep and the stacked step TimeSteps and states."""

    @jax.jit
    def run(key, actions):
        state, ts0 = env.reset(key)

        def body(s, xs):
            a, k = xs
            s, ts = env.step(s, a, k)
            return s, (s, ts)

        keys = jax.random.split(key, actions.shape[0])
        _, (states, tss) = jax.lax.scan(body, state, (actions, keys))
        return ts0, states, tss

    return run(KEY, jnp.asarray(actions, jnp.int32))


# --- AutoReset -------------------------------------------------------------------------------


def test_autoreset_keeps_final_observation_and_starts_a_new_episode(make_counter_env) -> None:
    env = AutoReset(make_counter_env(terminate_at=3, with_mask=True))
    ts0, states, tss = _scan_actions(env, [0, 0, 0, 0])
    off0 = float(ts0.observation[1])
    np.testing.assert_array_equal(ts0.info["final_observation"], ts0.observation)

    # Steps 1 and 2 go on: final_observation is the observation itself.
    for i, t in ((0, 1.0), (1, 2.0)):
        assert not bool(tss.terminated[i]) and not bool(tss.truncated[i])
        np.testing.assert_array_equal(tss.observation[i], [t, off0])
        np.testing.assert_array_equal(tss.info["final_observation"][i], [t, off0])

    # Step 3 terminates: the flags and reward (0 + 1) describe the step taken, the real last
    # observation [3, off0] is kept, and the returned observation is a fresh reset (t = 0, new
    # offset drawn from the reset key).
    assert bool(tss.terminated[2]) and not bool(tss.truncated[2])
    assert float(tss.reward[2]) == 1.0
    np.testing.assert_array_equal(tss.info["final_observation"][2], [3.0, off0])
    assert float(tss.observation[2][0]) == 0.0
    off1 = float(tss.observation[2][1])
    assert off1 != off0
    # The state was reset too: the next step continues the new episode from t = 0.
    assert int(states.t[2]) == 0 and float(states.offset[2]) == off1
    np.testing.assert_array_equal(tss.observation[3], [1.0, off1])
    assert not bool(tss.terminated[3])


def test_autoreset_action_mask_follows_the_reset_observation(make_counter_env) -> None:
    env = AutoReset(make_counter_env(terminate_at=3, with_mask=True))
    _, _, tss = _scan_actions(env, [0, 0, 0, 0])
    mask = np.asarray(tss.info["action_mask"])
    # t=1 (odd): action 1 illegal; t=2 (even): all legal.
    np.testing.assert_array_equal(mask[0], [True, False, True])
    np.testing.assert_array_equal(mask[1], [True, True, True])
    # Step 3 ends the episode at t=3 (odd, where action 1 would be illegal), but the agent acts
    # next in the reset state t=0, where every action is legal.
    np.testing.assert_array_equal(mask[2], [True, True, True])
    # t=1 of the new episode: illegal again.
    np.testing.assert_array_equal(mask[3], [True, False, True])
    # The ended episode's last mask (t=3: action 1 illegal) is kept for bootstrapping; when the
    # episode goes on it equals the mask.
    final = np.asarray(tss.info["final_action_mask"])
    np.testing.assert_array_equal(final[2], [True, False, True])
    np.testing.assert_array_equal(final[[0, 1, 3]], mask[[0, 1, 3]])


def test_autoreset_on_truncation(make_counter_env) -> None:
    env = AutoReset(make_counter_env(terminate_at=100, time_limit=2))
    ts0, _, tss = _scan_actions(env, [2, 2, 2])
    off0 = float(ts0.observation[1])
    assert not bool(tss.truncated[0])
    assert bool(tss.truncated[1]) and not bool(tss.terminated[1])
    np.testing.assert_array_equal(tss.info["final_observation"][1], [2.0, off0])
    assert float(tss.observation[1][0]) == 0.0


# --- EpisodeStatistics -----------------------------------------------------------------------


def test_episode_statistics_inside_autoreset_on_termination(make_counter_env) -> None:
    env = AutoReset(EpisodeStatistics(make_counter_env(terminate_at=3)))
    ts0, _, tss = _scan_actions(env, [0, 1, 2, 2, 2, 0, 1])
    assert float(ts0.info["episode_return"]) == 0.0 and int(ts0.info["episode_length"]) == 0
    # rewards = action + 1 = [1, 2, 3, 3, 3, 1, 2]; episodes end at steps 3 and 6.
    # episode 1: 1, 1+2=3, 3+3=6 (ends, return 6, length 3)
    # episode 2: 3, 3+3=6, 6+1=7 (ends, return 7, length 3); episode 3 starts: 2
    np.testing.assert_array_equal(tss.info["episode_return"], [1, 3, 6, 3, 6, 7, 2])
    np.testing.assert_array_equal(tss.info["episode_length"], [1, 2, 3, 1, 2, 3, 1])
    np.testing.assert_array_equal(tss.terminated, [0, 0, 1, 0, 0, 1, 0])
    assert tss.info["episode_return"].dtype == jnp.float32
    assert tss.info["episode_length"].dtype == jnp.int32


def test_episode_statistics_inside_autoreset_on_truncation(make_counter_env) -> None:
    env = AutoReset(EpisodeStatistics(make_counter_env(terminate_at=100, time_limit=2)))
    _, _, tss = _scan_actions(env, [2, 2, 0, 1, 1])
    # rewards [3, 3, 1, 2, 2]; truncated after every 2 steps:
    # episode 1: 3, 6 (ends); episode 2: 1, 1+2=3 (ends); episode 3: 2.
    np.testing.assert_array_equal(tss.info["episode_return"], [3, 6, 1, 3, 2])
    np.testing.assert_array_equal(tss.info["episode_length"], [1, 2, 1, 2, 1])
    np.testing.assert_array_equal(tss.truncated, [0, 1, 0, 1, 0])


# --- VectorEnv -------------------------------------------------------------------------------


def test_vector_env_shapes(make_counter_env) -> None:
    base = make_counter_env(terminate_at=3, with_mask=True)
    venv = VectorEnv(AutoReset(EpisodeStatistics(base)), 5)
    assert venv.num_envs == 5
    assert venv.observation_space is base.observation_space
    assert venv.action_space is base.action_space
    state, ts = jax.jit(venv.reset)(KEY)
    assert ts.observation.shape == (5, 2) and ts.observation.dtype == jnp.float32
    assert ts.reward.shape == (5,) and ts.terminated.shape == (5,)
    assert ts.info["action_mask"].shape == (5, 3)
    assert ts.info["final_observation"].shape == (5, 2)
    assert state.env_state.t.shape == (5,)  # EpisodeStatsState around the CounterState
    # Each copy gets its own key: five different offsets.
    assert len(set(np.asarray(ts.observation[:, 1]).tolist())) == 5
    actions = jnp.array([0, 1, 2, 0, 1], jnp.int32)
    state, ts = jax.jit(venv.step)(state, actions, KEY)
    assert ts.observation.shape == (5, 2) and ts.reward.shape == (5,)
    np.testing.assert_array_equal(ts.reward, [1, 2, 3, 1, 2])  # action + 1, per copy
    np.testing.assert_array_equal(ts.info["episode_length"], [1] * 5)
    # Attributes of the vector env are reachable through wrappers on top of it.
    assert NormalizeObservation(venv).num_envs == 5


@pytest.mark.parametrize("typed", [False, True])
def test_presplit_keys_give_the_same_step_as_one_key(make_counter_env, typed) -> None:
    """`step` takes one key or the keys it would split from it (`step_key_shape`); both give the
    same transition, bit for bit, with raw and typed keys. Episodes end on every step here, so
    the reset key decides the next observation."""
    venv = NormalizeObservation(VectorEnv(AutoReset(EpisodeStatistics(
        make_counter_env(terminate_at=1))), 3))
    assert venv.step_key_shape == (3, 2)
    key = jax.random.key(7) if typed else KEY
    state, _ = venv.reset(key)
    actions = jnp.array([0, 1, 2], jnp.int32)
    presplit = jax.vmap(jax.random.split)(jax.random.split(key, 3))  # VectorEnv, then AutoReset
    _, one = jax.jit(venv.step)(state, actions, key)
    _, split = jax.jit(venv.step)(state, actions, presplit)
    for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(split), strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(set(np.asarray(split.observation[:, 1]).tolist())) == 3  # fresh resets per copy


def test_vector_env_rejects_zero_envs(make_counter_env) -> None:
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(make_counter_env(), 0)


# --- NormalizeObservation --------------------------------------------------------------------


def test_normalize_observation_matches_numpy_statistics(make_counter_env) -> None:
    n_envs, n_steps = 3, 12
    raw = VectorEnv(AutoReset(make_counter_env(terminate_at=4)), n_envs)
    norm = NormalizeObservation(raw)
    actions = jnp.array([0, 1, 2], jnp.int32)
    keys = jax.random.split(KEY, n_steps + 1)

    raw_state, raw_ts = jax.jit(raw.reset)(keys[0])
    norm_state, norm_ts = jax.jit(norm.reset)(keys[0])
    seen = [np.asarray(raw_ts.observation)]
    raw_step, norm_step = jax.jit(raw.step), jax.jit(norm.step)
    for k in keys[1:]:
        raw_state, raw_ts = raw_step(raw_state, actions, k)
        norm_state, norm_ts = norm_step(norm_state, actions, k)
        seen.append(np.asarray(raw_ts.observation))
    seen = np.concatenate(seen)  # every observation the agent was shown: [(12 + 1) * 3, 2]

    stats = norm_state.stats
    np.testing.assert_allclose(stats.mean, seen.mean(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(stats.var, seen.var(axis=0), rtol=1e-4, atol=1e-4)
    # 39 observations counted, plus the 1e-4 prior count.
    np.testing.assert_allclose(float(stats.count), 39.0001, rtol=1e-6)

    mean, std = seen.mean(axis=0), np.sqrt(seen.var(axis=0) + 1e-8)
    # Step 12 ends every episode (t = 4, 8, 12): the final observation [4, offset] is normalised
    # with the same statistics as the reset observation [0, offset'] that is returned.
    assert bool(np.all(raw_ts.terminated))
    np.testing.assert_allclose(norm_ts.observation, (raw_ts.observation - mean) / std, atol=1e-4)
    np.testing.assert_allclose(
        norm_ts.info["final_observation"],
        (raw_ts.info["final_observation"] - mean) / std,
        atol=1e-4,
    )
    np.testing.assert_array_equal(raw_ts.info["final_observation"][:, 0], [4.0, 4.0, 4.0])
    assert norm_ts.observation.dtype == jnp.float32


def test_normalize_observation_unbatched_hand_computed(make_counter_env) -> None:
    env = NormalizeObservation(AutoReset(make_counter_env(terminate_at=10)))
    state, ts = env.reset(KEY)
    state, ts = env.step(state, jnp.int32(0), KEY)
    state, ts = env.step(state, jnp.int32(0), KEY)
    # t seen: 0, 1, 2 -> mean 1, variance ((0-1)^2 + 0 + (2-1)^2) / 3 = 2/3;
    # the last observation's t is normalised to (2 - 1) / sqrt(2/3) = 1.2247449.
    np.testing.assert_allclose(state.stats.mean[0], 1.0, rtol=1e-4)
    np.testing.assert_allclose(state.stats.var[0], 2.0 / 3.0, rtol=1e-4)
    np.testing.assert_allclose(ts.observation[0], 1.2247449, rtol=1e-4)


def test_normalize_observation_clips(make_counter_env) -> None:
    env = NormalizeObservation(AutoReset(make_counter_env(terminate_at=10)), clip=0.5)
    state, ts = env.reset(KEY)
    state, ts = env.step(state, jnp.int32(0), KEY)
    state, ts = env.step(state, jnp.int32(0), KEY)
    # Unclipped t would be 1.2247 (see above); clipped to 0.5.
    np.testing.assert_allclose(ts.observation[0], 0.5)


# --- NormalizeReward -------------------------------------------------------------------------


def test_normalize_reward_scales_by_std_of_discounted_return(make_counter_env) -> None:
    raw = VectorEnv(AutoReset(make_counter_env(terminate_at=2)), 2)
    env = NormalizeReward(raw, gamma=0.9)
    actions = jnp.array([0, 2], jnp.int32)  # rewards [1, 3] every step
    step = jax.jit(env.step)
    state, ts = env.reset(KEY)
    assert float(state.stats.count) == pytest.approx(1e-4)
    # The 1e-4 prior count (mean 0, variance 1) moves every variance below by about 1e-4
    # relative, hence rtol=2e-4.
    # Step 1: returns [1, 3]; variance of {1, 3} = 1 -> rewards [1, 3] / 1.
    state, ts = step(state, actions, KEY)
    np.testing.assert_allclose(ts.reward, [1.0, 3.0], rtol=2e-4)
    # Step 2: returns 0.9 * [1, 3] + [1, 3] = [1.9, 5.7]; seen {1, 3, 1.9, 5.7}: mean 2.9,
    # variance (1.9^2 + 0.1^2 + 1.0^2 + 2.8^2) / 4 = 12.46 / 4 = 3.115, sqrt = 1.7649363
    # -> rewards [1, 3] / 1.7649363 = [0.5665927, 1.6997781]. Both episodes end here.
    state, ts = step(state, actions, KEY)
    np.testing.assert_allclose(ts.reward, [0.5665927, 1.6997781], rtol=2e-4)
    assert bool(np.all(ts.terminated))
    np.testing.assert_array_equal(state.discounted_return, [0.0, 0.0])
    # Step 3: the discounted return restarted: returns [1, 3]; seen {1, 3, 1.9, 5.7, 1, 3}:
    # mean 2.6, variance (1.6^2 + 0.4^2 + 0.7^2 + 3.1^2 + 1.6^2 + 0.4^2) / 6 = 15.54 / 6 = 2.59,
    # sqrt = 1.6093477 -> rewards [0.6213698, 1.8641093].
    state, ts = step(state, actions, KEY)
    np.testing.assert_allclose(ts.reward, [0.6213698, 1.8641093], rtol=2e-4)
    np.testing.assert_allclose(state.discounted_return, [1.0, 3.0])
    assert ts.reward.dtype == jnp.float32


def _shaped(env):
    """`env` whose steps also report a shaping reward of 10 (`info["shaped_reward"]`)."""

    class Shaped:
        observation_space, action_space = env.observation_space, env.action_space

        def reset(self, key):
            state, ts = env.reset(key)
            return state, ts._replace(info={**ts.info, "shaped_reward": jnp.float32(0.0)})

        def step(self, state, action, key):
            state, ts = env.step(state, action, key)
            return state, ts._replace(info={**ts.info, "shaped_reward": jnp.float32(10.0)})

    return Shaped()


def test_annealed_reward_shaping_falls_linearly_and_leaves_the_returns_alone(
        make_counter_env) -> None:
    """A horizon of 4 steps: the shaping's weight is 1, 0.75, 0.5, 0.25, then 0 for good, across
    the episode boundary (episodes of 3 steps); the episode statistics below count the
    environment's own reward (1 a step)."""
    raw = VectorEnv(AutoReset(EpisodeStatistics(_shaped(make_counter_env(terminate_at=3)))), 2)
    env = AnnealedRewardShaping(raw, 4)
    step = jax.jit(env.step)
    state, ts = env.reset(KEY)
    rewards, returns = [], []
    for _ in range(7):
        state, ts = step(state, jnp.zeros(2, jnp.int32), KEY)
        rewards.append(ts.reward)
        returns.append(ts.info["episode_return"])
    np.testing.assert_allclose(np.stack(rewards)[:, 0], [11, 8.5, 6, 3.5, 1, 1, 1])
    np.testing.assert_array_equal(np.stack(returns)[[2, 5], 0], [3.0, 3.0])
    assert float(state.steps) == 4.0 and ts.reward.dtype == jnp.float32
    assert find_state(env, state, VectorEnv) is state.env_state


def test_annealed_reward_shaping_refuses_an_empty_horizon(make_counter_env) -> None:
    with pytest.raises(ValueError, match="horizon > 0"):
        AnnealedRewardShaping(VectorEnv(make_counter_env(), 2), 0)


# --- ClipAction ------------------------------------------------------------------------------


class EchoEnv:
    """Continuous actions in [-1, 2]^2; the observation is the action received, the reward its
    sum."""

    observation_space = Box(-np.inf, np.inf, (2,))
    action_space = Box(-1.0, 2.0, (2,))

    def reset(self, key):
        f = jnp.zeros((), jnp.bool_)
        return jnp.zeros(()), TimeStep(jnp.zeros(2), jnp.zeros(()), f, f, {})

    def step(self, state, action, key):
        f = jnp.zeros((), jnp.bool_)
        return state, TimeStep(action, jnp.sum(action), f, f, {})


def test_clip_action_clips_box_actions() -> None:
    env = ClipAction(EchoEnv())
    state, _ = env.reset(KEY)
    _, ts = env.step(state, jnp.array([-5.0, 5.0]), KEY)
    np.testing.assert_array_equal(ts.observation, [-1.0, 2.0])
    assert float(ts.reward) == 1.0  # -1 + 2
    _, ts = env.step(state, jnp.array([0.5, 1.5]), KEY)  # inside: unchanged
    np.testing.assert_array_equal(ts.observation, [0.5, 1.5])


def test_clip_action_leaves_discrete_actions_alone(make_counter_env) -> None:
    env = ClipAction(make_counter_env())
    state, _ = env.reset(KEY)
    _, ts = env.step(state, jnp.int32(2), KEY)
    assert float(ts.reward) == 3.0  # action 2 + 1


# --- FlattenObservation ----------------------------------------------------------------------


class Pair(NamedTuple):
    x: object
    y: object


class DictObsEnv:
    """Observation {"b": Pair(x [2] float32, y [] int32), "a": [2, 3] float32}, shifted by 100 per
    step; terminates after 2 steps."""

    observation_space = {
        "b": Pair(x=Box(-np.inf, np.inf, (2,)), y=Discrete(1000)),
        "a": Box(-np.inf, np.inf, (2, 3)),
    }
    action_space = Discrete(2)

    def _obs(self, t):
        shift = 100.0 * t.astype(jnp.float32)
        return {
            "b": Pair(x=jnp.array([10.0, 11.0]) + shift, y=jnp.int32(7) + 100 * t),
            "a": jnp.arange(6, dtype=jnp.float32).reshape(2, 3) + shift,
        }

    def reset(self, key):
        t = jnp.zeros((), jnp.int32)
        f = jnp.zeros((), jnp.bool_)
        return t, TimeStep(self._obs(t), jnp.zeros(()), f, f, {})

    def step(self, t, action, key):
        t = t + 1
        f = jnp.zeros((), jnp.bool_)
        return t, TimeStep(self._obs(t), jnp.zeros(()), t >= 2, f, {})


def test_flatten_observation_function_layout() -> None:
    obs = DictObsEnv()._obs(jnp.int32(0))
    flat = flatten_observation(obs)
    # dict keys sorted ("a" before "b"), then NamedTuple fields in order (x, y):
    # a = 0..5 (row-major), b.x = [10, 11], b.y = 7 (int -> float32).
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 10, 11, 7])
    assert flat.dtype == jnp.float32
    batched = jax.tree.map(lambda x: jnp.stack([x, x + 1]), obs)
    flat_b = flatten_observation(batched, batch_ndim=1)
    assert flat_b.shape == (2, 9)
    np.testing.assert_array_equal(flat_b[1], [1, 2, 3, 4, 5, 6, 11, 12, 8])


def test_flatten_observation_wrapper_on_vector_env() -> None:
    env = FlattenObservation(VectorEnv(AutoReset(DictObsEnv()), 2))
    # 2*3 + 2 + 1 (a Discrete leaf is one number) = 9
    assert isinstance(env.observation_space, Box) and env.observation_space.shape == (9,)
    state, ts = env.reset(KEY)
    assert ts.observation.shape == (2, 9) and ts.observation.dtype == jnp.float32
    np.testing.assert_array_equal(ts.observation[0], [0, 1, 2, 3, 4, 5, 10, 11, 7])
    state, ts = env.step(state, jnp.zeros(2, jnp.int32), KEY)
    np.testing.assert_array_equal(ts.observation[1], [100, 101, 102, 103, 104, 105, 110, 111, 107])
    state, ts = env.step(state, jnp.zeros(2, jnp.int32), KEY)
    # Step 2 terminates: the final observation (t = 2) is flattened too, the returned one is the
    # reset observation (t = 0).
    assert bool(np.all(ts.terminated))
    assert ts.info["final_observation"].shape == (2, 9)
    np.testing.assert_array_equal(
        ts.info["final_observation"][0], [200, 201, 202, 203, 204, 205, 210, 211, 207]
    )
    np.testing.assert_array_equal(ts.observation[0], [0, 1, 2, 3, 4, 5, 10, 11, 7])


def test_flatten_observation_unbatched_wrapper() -> None:
    env = FlattenObservation(DictObsEnv())
    _, ts = env.reset(KEY)
    assert ts.observation.shape == (9,)
    np.testing.assert_array_equal(ts.observation, [0, 1, 2, 3, 4, 5, 10, 11, 7])


# --- FlattenStructuredObservation ------------------------------------------------------------


class StructuredEnv(DictObsEnv):
    """DictObsEnv with a pytree of Box spaces (one per part, bounds included), as adapters of
    structured-observation libraries (Jumanji) declare them."""

    observation_space = {
        "b": Pair(x=Box(-np.inf, np.inf, (2,)), y=Box(0.0, 1000.0, ())),
        "a": Box(-1.0, 1000.0, (2, 3)),
    }


def test_flatten_structured_observation_space_keeps_bounds_and_layout() -> None:
    env = FlattenStructuredObservation(StructuredEnv())
    space = env.observation_space
    assert isinstance(space, Box) and space.shape == (9,) and space.dtype == jnp.float32
    # Parts in pytree order: a (6 values in [-1, 1000]), b.x (2, unbounded), b.y (1, [0, 1000]).
    np.testing.assert_array_equal(space.low, [-1] * 6 + [-np.inf] * 2 + [0])
    np.testing.assert_array_equal(space.high, [1000] * 6 + [np.inf] * 2 + [1000])
    assert env.layout == {"a": (0, (2, 3)), "b/x": (6, (2,)), "b/y": (8, ())}


def test_flatten_structured_observation_round_trips_through_the_stack() -> None:
    base = StructuredEnv()
    env = FlattenStructuredObservation(base)
    venv = VectorEnv(AutoReset(env), 2)
    state, ts = venv.reset(KEY)
    assert ts.observation.shape == (2, 9) and ts.observation.dtype == jnp.float32
    np.testing.assert_array_equal(ts.observation[0], [0, 1, 2, 3, 4, 5, 10, 11, 7])
    state, ts = venv.step(state, jnp.zeros(2, jnp.int32), KEY)
    state, ts = venv.step(state, jnp.zeros(2, jnp.int32), KEY)
    assert bool(np.all(ts.terminated))  # the final observation (t = 2) is flat too
    np.testing.assert_array_equal(ts.info["final_observation"][1],
                                  [200, 201, 202, 203, 204, 205, 210, 211, 207])
    # unflatten is reachable through every wrapper above and keeps the batch axis: a CNN torso
    # gets the image-like part back with its shape.
    parts = venv.unflatten(ts.info["final_observation"])
    expected = jax.tree.map(lambda x: jnp.stack([x, x]).astype(jnp.float32),
                            base._obs(jnp.int32(2)))
    assert parts["a"].shape == (2, 2, 3)
    for got, want in zip(jax.tree.leaves(parts), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(got, want)
    assert isinstance(parts["b"], Pair)


def test_flatten_structured_observation_refuses_non_box_parts() -> None:
    with pytest.raises(ValueError, match="pytree of Box"):
        FlattenStructuredObservation(DictObsEnv())  # its b.y part is Discrete


def test_flatten_structured_env_passes_the_contract() -> None:
    from rl_core import check_environment

    check_environment(FlattenStructuredObservation(StructuredEnv()), num_steps=8)
