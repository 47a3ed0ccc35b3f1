"""Spaces: sampling stays inside the space (and inside a legal-action mask), membership checks,
and construction errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import Box, Discrete, MultiDiscrete, describe

KEYS = jax.random.split(jax.random.PRNGKey(0), 2000)


def test_discrete_sample_covers_every_action_and_nothing_else() -> None:
    space = Discrete(5)
    samples = np.asarray(jax.vmap(space.sample)(KEYS))
    assert samples.dtype == np.int32 and samples.shape == (2000,)
    assert set(samples.tolist()) == {0, 1, 2, 3, 4}


def test_discrete_masked_sample_never_picks_an_illegal_action() -> None:
    space = Discrete(5)
    mask = jnp.array([False, True, False, True, False])
    samples = np.asarray(jax.vmap(lambda k: space.sample(k, mask))(KEYS))
    # 2000 draws: every one legal, and both legal actions really occur.
    assert set(samples.tolist()) == {1, 3}
    single = jnp.array([False, False, False, False, True])
    samples = np.asarray(jax.vmap(lambda k: space.sample(k, single))(KEYS))
    assert np.all(samples == 4)


def test_discrete_contains() -> None:
    space = Discrete(3)
    assert bool(space.contains(jnp.int32(0)))
    assert bool(space.contains(jnp.int32(2)))
    assert not bool(space.contains(jnp.int32(3)))
    assert not bool(space.contains(jnp.int32(-1)))
    assert not bool(space.contains(jnp.float32(1.0)))  # not an integer
    assert not bool(space.contains(jnp.array([1], jnp.int32)))  # not a scalar


def test_discrete_rejects_empty() -> None:
    with pytest.raises(ValueError, match="n >= 1"):
        Discrete(0)


def test_multidiscrete_sample_and_contains() -> None:
    space = MultiDiscrete((2, 3, 4))
    assert space.nvec == (2, 3, 4) and space.shape == (3,)
    samples = np.asarray(jax.vmap(space.sample)(KEYS))
    assert samples.shape == (2000, 3) and samples.dtype == np.int32
    for i, n in enumerate((2, 3, 4)):
        assert set(samples[:, i].tolist()) == set(range(n))
    assert bool(space.contains(jnp.array([1, 2, 3], jnp.int32)))
    assert not bool(space.contains(jnp.array([2, 0, 0], jnp.int32)))  # 2 >= nvec[0]
    assert not bool(space.contains(jnp.array([0, 0, -1], jnp.int32)))
    assert not bool(space.contains(jnp.array([0, 0], jnp.int32)))  # wrong shape
    assert not bool(space.contains(jnp.array([0.0, 0.0, 0.0])))  # not integers


def test_multidiscrete_masked_sample_respects_each_dimension() -> None:
    space = MultiDiscrete((2, 3, 4))
    # Per-dimension masks concatenated: dim 0 only 1; dim 1 only 0 or 2; dim 2 only 3.
    mask = jnp.array([False, True, True, False, True, False, False, False, True])
    samples = np.asarray(jax.vmap(lambda k: space.sample(k, mask))(KEYS))
    assert set(samples[:, 0].tolist()) == {1}
    assert set(samples[:, 1].tolist()) == {0, 2}
    assert set(samples[:, 2].tolist()) == {3}


def test_multidiscrete_validation() -> None:
    with pytest.raises(ValueError, match="positive"):
        MultiDiscrete((2, 0))
    with pytest.raises(ValueError, match="non-empty"):
        MultiDiscrete(())


def test_box_bounded_sample_and_contains() -> None:
    space = Box(np.array([-1.0, 0.0]), np.array([1.0, 5.0]), (2,))
    assert space.bounded
    samples = np.asarray(jax.vmap(space.sample)(KEYS))
    assert samples.shape == (2000, 2) and samples.dtype == np.float32
    assert np.all(samples[:, 0] >= -1.0) and np.all(samples[:, 0] <= 1.0)
    assert np.all(samples[:, 1] >= 0.0) and np.all(samples[:, 1] <= 5.0)
    # Uniform on [0, 5]: the samples spread over the box (not stuck at a point).
    assert samples[:, 1].min() < 0.5 and samples[:, 1].max() > 4.5
    assert bool(space.contains(jnp.array([0.5, 5.0])))
    assert not bool(space.contains(jnp.array([1.5, 1.0])))
    assert not bool(space.contains(jnp.array([0.0, -0.1])))
    assert not bool(space.contains(jnp.array([0.0, jnp.nan])))
    assert not bool(space.contains(jnp.array([0.0, 1.0, 2.0])))  # wrong shape


def test_box_broadcasts_scalar_bounds() -> None:
    space = Box(-2.0, 3.0, (2, 3))
    assert space.low.shape == (2, 3) and space.high.shape == (2, 3)
    assert np.all(space.low == -2.0) and np.all(space.high == 3.0)
    assert space.low.dtype == np.float32
    assert space.shape == (2, 3)


def test_box_unbounded_sample_respects_finite_side() -> None:
    space = Box(0.0, np.inf, (3,))
    assert not space.bounded
    samples = np.asarray(jax.vmap(space.sample)(KEYS))
    assert np.all(np.isfinite(samples)) and np.all(samples >= 0.0)
    assert bool(space.contains(jnp.array([0.0, 1e30, 7.0])))
    assert not bool(space.contains(jnp.array([-1e-3, 0.0, 0.0])))


def test_box_rejects_low_above_high() -> None:
    with pytest.raises(ValueError, match="low > high"):
        Box(np.array([0.0, 2.0]), np.array([1.0, 1.0]), (2,))


def test_describe() -> None:
    assert describe(Discrete(4)) == "Discrete(4)"
    assert describe(MultiDiscrete((2, 3))) == "MultiDiscrete([2, 3])"
    assert describe(Box(-1.0, 1.0, (3,))) == "Box(-1, 1, (3,), float32)"
    assert describe({"a": Discrete(2)}) == "{a: Discrete(2)}"
