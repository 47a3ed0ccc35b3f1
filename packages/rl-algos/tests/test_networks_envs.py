"""Networks (shapes, orthogonal initialisation) and the standard environment stack."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common import ActorCritic, episode_metrics, make_vector_env, orthogonal_linear
from rl_core import (
    AgentsAsBatch,
    AutoReset,
    Box,
    ClipAction,
    Discrete,
    EpisodeStatistics,
    FlattenObservation,
    NormalizeObservation,
    NormalizeReward,
    OptimisticResetVectorEnv,
    TimeStep,
    VectorEnv,
)

KEY = jax.random.PRNGKey(0)


def test_orthogonal_linear() -> None:
    layer = jax.jit(lambda k: orthogonal_linear(k, 3, 5, 2.0))(KEY)
    w = np.asarray(layer.weight)  # [5, 3]: orthonormal columns scaled by the gain 2
    np.testing.assert_allclose(w.T @ w, 4.0 * np.eye(3), atol=1e-5)
    np.testing.assert_array_equal(layer.bias, np.zeros(5))


@jax.jit
def _actor_critic_outputs(key):
    # Built and applied inside one compiled function: eager Equinox construction would compile
    # dozens of tiny ops one by one.
    cat = ActorCritic(key, d_obs=4, d_out=2, hidden=(8, 8), activation="tanh", gaussian=False)
    gauss = ActorCritic(key, d_obs=3, d_out=2, hidden=(8,), activation="relu", gaussian=True)
    linear = ActorCritic(key, d_obs=3, d_out=4, hidden=(), activation="tanh", gaussian=False)
    return cat(jnp.ones(4)), gauss(jnp.ones(3)), gauss.value(jnp.ones(3)), linear(jnp.ones(3))


def test_actor_critic_shapes() -> None:
    (out, value), ((mean, log_std), g_value), g_value2, (l_out, l_value) = _actor_critic_outputs(
        KEY
    )
    assert out.shape == (2,) and value.shape == ()
    # The policy head starts tiny (gain 0.01): an almost uniform policy.
    assert float(jnp.max(jnp.abs(out))) < 0.1
    assert mean.shape == (2,) and g_value.shape == ()
    np.testing.assert_array_equal(log_std, [0.0, 0.0])  # std 1 at the start
    assert float(g_value2) == float(g_value)
    # Without hidden layers the heads read the observation directly.
    assert l_out.shape == (4,) and l_value.shape == ()


class DictBoxEnv:
    """Dict observation and Box actions: the stack must flatten and clip."""

    observation_space = {"p": Box(-1.0, 1.0, (2,)), "q": Box(-1.0, 1.0, (1,))}
    action_space = Box(-1.0, 1.0, (1,))

    def reset(self, key):
        f = jnp.zeros((), jnp.bool_)
        obs = {"p": jnp.zeros(2), "q": jnp.zeros(1)}
        return jnp.zeros(()), TimeStep(obs, jnp.zeros(()), f, f, {})

    def step(self, state, action, key):
        f = jnp.zeros((), jnp.bool_)
        obs = {"p": jnp.zeros(2), "q": action}
        return state, TimeStep(obs, action[0], f, f, {})


def _layers(venv):
    out = []
    while hasattr(venv, "env"):
        out.append(type(venv))
        venv = venv.env
    return out


def test_make_vector_env_stack_order() -> None:
    venv = make_vector_env(DictBoxEnv(), 3, normalize_observations=True, normalize_rewards=True)
    assert _layers(venv) == [
        ClipAction,
        NormalizeReward,
        NormalizeObservation,
        FlattenObservation,
        VectorEnv,
        AutoReset,
        EpisodeStatistics,
    ]
    assert venv.num_envs == 3 and venv.observation_space.shape == (3,)
    state, ts = jax.jit(venv.reset)(KEY)
    state, ts = jax.jit(venv.step)(state, jnp.full((3, 1), 5.0), KEY)
    # The action is clipped to 1 before the env sees it: reward 1, and the episode statistics
    # (below the reward normaliser) record the raw reward.
    np.testing.assert_array_equal(ts.info["episode_return"], [1.0, 1.0, 1.0])


def test_make_vector_env_minimal_stack() -> None:
    class DiscreteVec:  # only the spaces matter to the stack's construction
        observation_space = Box(-1.0, 1.0, (2,))
        action_space = Discrete(2)

    venv = make_vector_env(DiscreteVec(), 2)
    assert _layers(venv) == [VectorEnv, AutoReset, EpisodeStatistics]


def test_make_vector_env_resets_optimistically_where_the_env_asks() -> None:
    """An environment declaring `optimistic_reset_ratio` (a dear reset, as Craftax's) is
    vectorised with few resets per step (at most one per environment); a multi-agent one has
    its agents batched on top."""

    class DearReset:
        observation_space = Box(-1.0, 1.0, (2,))
        action_space = Discrete(2)
        optimistic_reset_ratio = 16

    venv = make_vector_env(DearReset(), 64)
    assert _layers(venv) == [OptimisticResetVectorEnv, EpisodeStatistics]
    assert venv.num_envs == 64 and venv.num_resets == 4
    assert make_vector_env(DearReset(), 8).num_resets == 1

    class TwoAgents(DearReset):
        num_agents = 2
        agents = ("a", "b")
        optimistic_reset_ratio = None

    venv = make_vector_env(TwoAgents(), 3)
    assert _layers(venv) == [AgentsAsBatch, VectorEnv, AutoReset, EpisodeStatistics]
    assert venv.num_envs == 6


def test_episode_metrics() -> None:
    info = {
        "episode_return": jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        "episode_length": jnp.array([[1, 2], [3, 4], [5, 6]], jnp.int32),
    }
    terminated = jnp.array([[False, True], [False, False], [False, False]])
    truncated = jnp.array([[False, False], [True, False], [False, True]])
    m = episode_metrics(info, terminated, truncated)
    # finished: (0, 1) return 2 length 2; (1, 0) return 3 length 3; (2, 1) return 6 length 6
    assert float(m["episode_return_sum"]) == 11.0  # 2 + 3 + 6
    assert float(m["episode_length_sum"]) == 11.0  # 2 + 3 + 6
    assert float(m["episode_count"]) == 3.0
    assert all(v.dtype == jnp.float32 for v in m.values())
    assert "episode_achievements_sum" not in m
    # Achievements (Craftax): unlocked-so-far flags [T, N, K]; only the finished episodes' count.
    ach = jnp.zeros((3, 2, 2)).at[0, 1].set(jnp.array([1.0, 1.0])).at[1, 0, 0].set(1.0)
    ach = ach.at[2, 0].set(jnp.array([1.0, 1.0]))  # (2, 0) goes on: not counted
    m = episode_metrics({**info, "achievements": ach}, terminated, truncated)
    np.testing.assert_array_equal(np.asarray(m["episode_achievements_sum"]), [2.0, 1.0])


class EarlyLeaver:
    """Two agents, +1 each per step while in the game: agent 0 leaves (terminated) after its
    first step, agent 1 is truncated at step 3. Team return 1 + 3 = 4 over 3 steps."""

    observation_space = Box(-1.0, 1.0, (1,))
    action_space = Discrete(2)
    num_agents = 2
    agents = ("leaver", "stayer")

    def _ts(self, t, reward, terminated, truncated):
        return TimeStep(jnp.zeros((2, 1), jnp.float32), reward, terminated, truncated, {})

    def reset(self, key):
        zeros = jnp.zeros((2,), jnp.bool_)
        return jnp.zeros((), jnp.int32), self._ts(0, jnp.zeros((2,), jnp.float32), zeros, zeros)

    def step(self, t, action, key):
        t = t + 1
        out0 = t >= 1
        reward = jnp.array([t <= 1, True], jnp.float32)
        terminated = jnp.array([out0, False])
        truncated = jnp.array([False, t >= 3])
        return t, self._ts(t, reward, terminated, truncated)


def test_episode_metrics_count_a_team_episode_once_per_agent_when_it_ends() -> None:
    """An agent out before its team adds nothing until the episode ends: over 9 steps (three
    episodes of 3 steps in each of 2 environments) every actor counts 3 episodes of team return
    4 and length 3."""
    from rl_core import rollout

    venv = make_vector_env(EarlyLeaver(), 2)
    state, ts = venv.reset(KEY)

    def policy(ts, key):
        return jnp.zeros((4,), jnp.int32), {}

    _, traj = rollout(venv, policy, state, ts, KEY, 9)
    m = episode_metrics(traj.info, traj.terminated, traj.truncated)
    assert float(m["episode_count"]) == 3 * 2 * 2  # episodes x environments x agents
    assert float(m["episode_return_sum"]) / float(m["episode_count"]) == 4.0
    assert float(m["episode_length_sum"]) / float(m["episode_count"]) == 3.0


def test_craftax_trains_on_optimistic_resets_unless_asked_not_to() -> None:
    """The craftax adapter's stack takes one fresh world per 16 environments per step by
    default; `reset_ratio=0` asks for a reset of every environment at every step."""
    pytest.importorskip("craftax")
    import rl_envs

    classic = "craftax/Craftax-Classic-Symbolic-v1"
    venv = make_vector_env(rl_envs.make(classic), 64)
    assert isinstance(venv, OptimisticResetVectorEnv) and venv.num_resets == 4
    assert _layers(make_vector_env(rl_envs.make(classic, reset_ratio=0), 64)) == [
        VectorEnv, AutoReset, EpisodeStatistics]
