"""Networks (shapes, orthogonal initialisation) and the standard environment stack."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

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
