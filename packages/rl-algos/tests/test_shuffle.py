"""`rl_algos.common.permutation` must be `jax.random.permutation` bit for bit (so that using it
changes no training result), and its radix argsort must be a stable argsort, ties included."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common import permutation, shuffled_minibatches, stable_argsort_u32


@pytest.mark.parametrize("n", [1, 2, 3, 7, 128, 512, 1000, 1625, 1626, 4096, 65536, 70_000])
def test_permutation_equals_jax_random_permutation(n):
    # 1,625 is the last size of one round in jax's `_shuffle`; 1,626 to 65,536 take two;
    # 70,000 goes to jax itself.
    keys = jax.random.split(jax.random.PRNGKey(n), 8)
    expected = jax.vmap(lambda k: jax.random.permutation(k, n))(keys)
    got = jax.jit(jax.vmap(lambda k: permutation(k, n)))(keys)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_permutation_accepts_typed_keys():
    key = jax.random.key(3)
    np.testing.assert_array_equal(np.asarray(permutation(key, 300)),
                                  np.asarray(jax.random.permutation(key, 300)))


@pytest.mark.parametrize("n", [2, 5, 512, 4096])
def test_stable_argsort_u32_keeps_index_order_on_ties(n):
    rng = np.random.default_rng(n)
    # Keys that tie often, differ only in their high bits, only in their low bits, or in both.
    for keys in (rng.integers(0, 4, n) << 30, rng.integers(0, 4, n), rng.integers(0, 2**32, n),
                 rng.integers(0, 3, n) * 0x10001):
        keys = keys.astype(np.uint32)
        got = np.asarray(stable_argsort_u32(jnp.asarray(keys)))
        np.testing.assert_array_equal(got, np.argsort(keys, kind="stable"))


def test_stable_argsort_u32_refuses_too_many_keys():
    with pytest.raises(ValueError, match="2\\^16"):
        stable_argsort_u32(jnp.zeros((70_000,), jnp.uint32))


def test_shuffled_minibatches_permutes_every_leaf_alike():
    key = jax.random.PRNGKey(5)
    batch = {"a": jnp.arange(12), "b": jnp.arange(24.0).reshape(12, 2)}
    mbs = shuffled_minibatches(key, batch, 3)
    assert mbs["a"].shape == (3, 4) and mbs["b"].shape == (3, 4, 2)
    perm = np.asarray(permutation(key, 12))
    np.testing.assert_array_equal(np.asarray(mbs["a"]).reshape(-1), perm)
    np.testing.assert_array_equal(np.asarray(mbs["b"]).reshape(12, 2),
                                  np.asarray(batch["b"])[perm])
