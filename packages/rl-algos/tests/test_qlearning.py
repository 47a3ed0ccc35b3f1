"""Tabular Q-learning: the update and the ε-greedy choice by hand, refusal of envs it cannot
handle, and the proof that it learns: 30 agents trained at once on a 5×5 GridWorld each follow a
shortest path to the goal from every cell."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos import ConfigError, get
from rl_algos.common import hparams_as_arrays
from rl_algos.qlearning import (
    QLearningConfig,
    QLearningHParams,
    epsilon_greedy,
    make_algorithm,
    make_train,
    q_learning_update,
)
from rl_algos.qlearning.train import _GOLDEN, hash_words


def test_q_learning_update_by_hand() -> None:
    q = jnp.zeros((3, 2), jnp.float32).at[1].set(jnp.array([2.0, 4.0]))
    hp = QLearningHParams(lr=0.5, gamma=0.9)
    obs, act = jnp.array([0, 2]), jnp.array([1, 0])
    reward, next_obs = jnp.array([-1.0, 1.0]), jnp.array([1, 1])
    # Not terminated: Q[0,1] = 0 + 0.5 (-1 + 0.9 * max(2, 4) - 0) = 1.3
    # Terminated:     Q[2,0] = 0 + 0.5 (1 + 0 - 0) = 0.5 (no bootstrap from the next state)
    new = q_learning_update(q, obs, act, reward, next_obs, jnp.array([False, True]), hp)
    np.testing.assert_allclose(new, [[0.0, 1.3], [2.0, 4.0], [0.5, 0.0]], rtol=1e-6)


def test_epsilon_greedy_breaks_ties_uniformly_and_explores() -> None:
    q = jnp.tile(jnp.array([[1.0, 3.0, 3.0, 0.0]]), (40_000, 1))  # actions 1 and 2 tie
    bits = jax.random.bits(jax.random.PRNGKey(0), (2, 40_000), jnp.uint32)
    greedy = np.asarray(epsilon_greedy(q, bits, jnp.float32(0.0)))
    counts = np.bincount(greedy, minlength=4) / 40_000
    assert counts[0] == 0 and counts[3] == 0
    np.testing.assert_allclose(counts[1:3], [0.5, 0.5], atol=0.01)
    # epsilon = 1: uniform over all four actions.
    rand = np.asarray(epsilon_greedy(q, bits, jnp.float32(1.0)))
    np.testing.assert_allclose(np.bincount(rand, minlength=4) / 40_000, 0.25, atol=0.01)
    # epsilon = 0.2: P(action 0) = 0.2 / 4 = 0.05; P(action 1) = 0.8 / 2 + 0.05 = 0.45.
    mixed = np.asarray(epsilon_greedy(q, bits, jnp.float32(0.2)))
    np.testing.assert_allclose(np.mean(mixed == 0), 0.05, atol=0.005)
    np.testing.assert_allclose(np.mean(mixed == 1), 0.45, atol=0.01)
    # Three-way tie over nine actions; a single maximum is always taken.
    q9 = jnp.zeros((30_000, 9)).at[:, 2].set(1.0).at[:, 4].set(1.0).at[:, 7].set(1.0)
    g9 = np.asarray(epsilon_greedy(q9, bits[:, :30_000], jnp.float32(0.0)))
    np.testing.assert_allclose(np.bincount(g9, minlength=9)[[2, 4, 7]] / 30_000, 1 / 3,
                               atol=0.012)
    one = jnp.zeros((100, 9)).at[:, 5].set(2.0)
    assert np.all(np.asarray(epsilon_greedy(one, bits[:, :100], jnp.float32(0.0))) == 5)


def test_hash_words_are_uniform_and_independent_across_items() -> None:
    base = jax.random.bits(jax.random.PRNGKey(3), (2,), jnp.uint32)
    w = np.asarray(hash_words(base, 4, 100_000))  # the update's layout: 4 roles x (T * n)
    assert w.shape == (4, 100_000) and w.dtype == np.uint32
    # No word repeats another (distinct counters through a bijective hash): no role's stream is
    # a shifted copy of another's.
    assert np.unique(w).size == w.size
    # Each of the 32 bits is set about half the time, in every role.
    bit_means = ((w[..., None] >> np.arange(32, dtype=np.uint32)) & 1).mean(axis=1)
    np.testing.assert_allclose(bit_means, 0.5, atol=0.01)
    # Consecutive items, items one step apart (n = 1,000 environments) and the roles are
    # uncorrelated.
    u = w.astype(np.float64) / 2**32
    for lag in (1, 1_000):
        assert abs(np.corrcoef(u[0, :-lag], u[0, lag:])[0, 1]) < 0.02
    for r in range(1, 4):
        assert abs(np.corrcoef(u[0], u[r])[0, 1]) < 0.02
    # Mod 4 (the exploratory action of a 4-action agent) is uniform.
    np.testing.assert_allclose(np.bincount(w[1] % 4) / 100_000, 0.25, atol=0.01)


def test_hash_words_of_calls_with_overlapping_counters_are_unrelated() -> None:
    """Two calls whose first words put their counters 1,000 apart (an overlap that happens
    among the many updates of many agents): with the same second word the later call's words
    are the earlier's shifted by 1,000 places; with different second words (what two threefry
    draws give) the shifted streams share no word in place and are uncorrelated."""
    a, b = np.uint32(123_456_789), np.uint32(987_654_321)
    shifted = np.uint32((int(a) + 1_000 * int(_GOLDEN)) % 2**32)  # 1,000 counters further
    w1 = np.asarray(hash_words(jnp.array([a, b]), 1, 20_000))[0]
    same_key = np.asarray(hash_words(jnp.array([shifted, b]), 1, 20_000))[0]
    np.testing.assert_array_equal(same_key[:-1_000], w1[1_000:])  # the mechanism
    other_key = np.asarray(hash_words(jnp.array([shifted, b ^ np.uint32(1)]), 1, 20_000))[0]
    assert not np.any(other_key[:-1_000] == w1[1_000:])
    u1, u2 = w1[1_000:].astype(np.float64), other_key[:-1_000].astype(np.float64)
    assert abs(np.corrcoef(u1, u2)[0, 1]) < 0.03
    assert 0.48 < np.mean((w1[1_000:] >> 31) == (other_key[:-1_000] >> 31)) < 0.52


def test_qlearning_refuses_continuous_observations() -> None:
    env = rl_envs.make("gymnax/CartPole-v1")
    with pytest.raises(ConfigError, match="Discrete observation space"):
        make_algorithm(env, QLearningConfig())
    with pytest.raises(ConfigError, match="learns from Discrete observations"):
        get("qlearning").check_env(env)
    # ... and the network algorithms refuse the tabular GridWorld the same way.
    with pytest.raises(ConfigError, match="pick a tabular method such as 'qlearning'"):
        get("ppo").check_env(rl_envs.make("native/GridWorld"))


@pytest.mark.learning
def test_thirty_agents_each_learn_the_shortest_paths() -> None:
    env = rl_envs.make("native/GridWorld")  # 5 x 5, reward -1 per step
    n = 30
    config = QLearningConfig(total_timesteps=50_000)
    train = make_train(env, config)
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (n,)), hparams_as_arrays(QLearningHParams()))
    res = jax.jit(jax.vmap(train))(keys, hp)
    q = np.asarray(res.state.train_state.params)  # [30, 25, 4]
    assert q.shape == (n, 25, 4)
    nxt, dist = env.next_cell, env.shortest_distance()
    for agent in range(n):
        for start in range(24):
            cell, steps = start, 0
            while cell != env.goal and steps < 25:
                cell, steps = nxt[cell, int(np.argmax(q[agent, cell]))], steps + 1
            assert steps == dist[start], (agent, start, steps, dist[start])
    # The learning curve is reported: episodes end, with returns of minus their lengths.
    m = res.metrics
    np.testing.assert_allclose(m["episode_return_sum"], -m["episode_length_sum"])
    assert np.all(np.asarray(m["episode_count"][:, -1]) > 0)


def test_vmapped_row_gather_and_scatter_equal_plain_indexing() -> None:
    from rl_algos.qlearning.train import set_entries, take_rows

    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(5), 4)
    tables = jax.random.normal(k1, (3, 7, 4))  # 3 agents, 7 states, 4 actions
    rows = jax.random.randint(k2, (3, 5), 0, 7)
    cols = jax.random.randint(k3, (3, 5), 0, 4)
    vals = jax.random.normal(k4, (3, 5))
    got = jax.jit(jax.vmap(take_rows))(tables, rows)
    np.testing.assert_array_equal(got, np.stack([tables[i][rows[i]] for i in range(3)]))
    # Unbatched table, batched rows (and nested vmap).
    got2 = jax.vmap(jax.vmap(take_rows, (None, 0)), (None, 0))(tables[0], rows[None])
    np.testing.assert_array_equal(got2[0], np.stack([tables[0][rows[i]] for i in range(3)]))
    rows_u = jnp.array([[0, 1, 2, 3, 4]] * 3)  # distinct rows: no duplicate winner to pick
    new = jax.jit(jax.vmap(set_entries))(tables, rows_u, cols, vals)
    want = np.stack([tables[i].at[rows_u[i], cols[i]].set(vals[i]) for i in range(3)])
    np.testing.assert_array_equal(new, want)
