"""The on-device replay buffer: wrap-around overwrites the oldest items, sampling draws only from
filled slots, and everything works per member under vmap."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common.config import ConfigError
from rl_algos.common.replay import ReplayBuffer


def items(values, dim: int = 2):
    v = jnp.asarray(values, jnp.float32)
    return {"x": jnp.repeat(v[:, None], dim, axis=1), "i": v.astype(jnp.int32)}


EXAMPLE = {"x": jnp.zeros((2,), jnp.float32), "i": jnp.zeros((), jnp.int32)}


def test_wrap_around_overwrites_the_oldest_items() -> None:
    rb = ReplayBuffer(capacity=5, batch_size=4)
    state = rb.init(EXAMPLE)
    assert int(rb.size(state)) == 0
    state = rb.add(state, items([1, 2, 3]))
    assert int(rb.size(state)) == 3
    state = rb.add(state, items([4, 5, 6]))
    # 6 went into the slot of 1, the oldest; every other item is still there.
    np.testing.assert_array_equal(state.experience["i"], [6, 2, 3, 4, 5])
    assert int(rb.size(state)) == 5
    state = rb.add(state, items([7, 8, 9, 10, 11]))  # a whole lap
    np.testing.assert_array_equal(np.sort(state.experience["i"]), [7, 8, 9, 10, 11])
    samples = np.concatenate([np.asarray(rb.sample(state, k)["i"])
                              for k in jax.random.split(jax.random.PRNGKey(0), 50)])
    assert set(samples.tolist()) == {7, 8, 9, 10, 11}


def test_sampling_draws_only_from_filled_slots() -> None:
    rb = ReplayBuffer(capacity=100, batch_size=64)
    state = rb.add(rb.init(EXAMPLE), items([1, 2, 3]))
    batch = jax.vmap(rb.sample, in_axes=(None, 0))(state,
                                                  jax.random.split(jax.random.PRNGKey(1), 20))
    assert batch["i"].shape == (20, 64) and batch["x"].shape == (20, 64, 2)
    # 97 empty (zero) slots are never drawn; each of the three items is.
    assert set(np.asarray(batch["i"]).ravel().tolist()) == {1, 2, 3}
    np.testing.assert_array_equal(batch["x"][..., 0], batch["i"].astype(np.float32))


def test_per_member_buffers_under_vmap() -> None:
    rb = ReplayBuffer(capacity=8, batch_size=8)
    members = 4
    state = jax.vmap(lambda _: rb.init(EXAMPLE))(jnp.arange(members))
    assert state.experience["x"].shape == (members, 8, 2)
    # member m stores the values 10*m + 1 .. 10*m + 3
    data = jax.vmap(lambda m: items(10 * m + jnp.arange(1, 4)))(jnp.arange(members))
    state = jax.jit(jax.vmap(rb.add))(state, data)
    np.testing.assert_array_equal(jax.vmap(rb.size)(state), [3] * members)
    batch = jax.jit(jax.vmap(rb.sample))(state, jax.random.split(jax.random.PRNGKey(2), members))
    assert batch["i"].shape == (members, 8) and batch["x"].shape == (members, 8, 2)
    for m in range(members):
        assert set(np.asarray(batch["i"][m]).tolist()) <= {10 * m + 1, 10 * m + 2, 10 * m + 3}


def test_a_batch_larger_than_the_buffer_is_refused() -> None:
    with pytest.raises(ConfigError, match="capacity"):
        ReplayBuffer(capacity=10, batch_size=11)


def test_sampling_is_uniform_over_the_filled_slots() -> None:
    rb = ReplayBuffer(capacity=100, batch_size=64)
    state = rb.add(rb.init(EXAMPLE), items(range(1, 8)))  # empty slots hold 0
    draws = jax.jit(jax.vmap(rb.sample, in_axes=(None, 0)))(
        state, jax.random.split(jax.random.PRNGKey(3), 200))["i"]
    counts = np.bincount(np.asarray(draws).ravel(), minlength=8)
    n, p = draws.size, 1 / 7
    assert counts[0] == 0 and len(counts) == 8
    # every filled slot within 4 standard deviations of n/7 (12,800 draws: 1829 +- 40 each)
    assert np.all(np.abs(counts[1:] - n * p) < 4 * np.sqrt(n * p * (1 - p))), counts
