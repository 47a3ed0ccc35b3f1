"""Minibatch shuffling: `jax.random.permutation`'s exact result, computed several times faster
on CPU.

`jax.random.permutation(key, n)` sorts `arange(n)` by random 32-bit keys with a stable two-operand
sort (`lax.sort_key_val`), once per round (one round up to n = 1,625, two up to 2^16). XLA's CPU
backend sorts a single uint32 operand about 6x faster than a key-value pair (64 x 512 under
`vmap`: 0.6 ms against 3.7 ms), and PPO draws one permutation per epoch: on CartPole the shuffle
(these sorts and the minibatch gathers) is 4% of an update at one seed and 6% at 16 vmapped
seeds (docs/benchmarks.md, the PPO breakdown).
`permutation` below produces the same permutation bit for bit from the same key (same rounds,
same random bits, same tie order) with two single-operand sorts per round, so switching to it
changes no result.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

_U32_MAX = np.iinfo(np.uint32).max


def stable_argsort_u32(keys: jax.Array) -> jax.Array:
    """The stable argsort of a uint32 vector `keys [n]` (ties keep index order), `int32 [n]`,
    for n <= 2^16, as a least-significant-digit radix sort of two single-operand sorts: each
    sort key carries a position in its low `b = ceil(log2 n)` bits, so it is unique and a plain
    sort is a stable one.

    Pass 1 orders by the low `b` bits of the key (ties by index); pass 2 orders that sequence by
    the high `32 - b` bits (ties by position in pass 1's order): together, by (key, index)."""
    n = keys.shape[-1]
    b = max(1, (n - 1).bit_length())
    if 2 * b > 32:
        raise ValueError(f"stable_argsort_u32 handles at most 2^16 keys, got {n}")
    low = jnp.uint32((1 << b) - 1)
    position = jnp.arange(n, dtype=jnp.uint32)
    by_low = jnp.sort(((keys & low) << b) | position) & low
    by_high = jnp.sort((keys[by_low] & ~low) | position) & low
    return by_low[by_high].astype(jnp.int32)


def permutation(key: jax.Array, n: int) -> jax.Array:
    """`jax.random.permutation(key, n)`, bit for bit (`int32 [n]`), faster on CPU; sizes above
    2^16 go to `jax.random.permutation` itself. `key` is one PRNG key (vmap for many)."""
    if n < 2 or n > 1 << 16:
        return jax.random.permutation(key, n)
    # jax's static number of rounds (random/core.py `_shuffle`, exponent 3).
    num_rounds = int(np.ceil(3 * np.log(n) / np.log(_U32_MAX)))
    x = jnp.arange(n, dtype=jnp.int32)
    for _ in range(num_rounds):
        key, subkey = jax.random.split(key)
        x = x[stable_argsort_u32(jax.random.bits(subkey, (n,), jnp.uint32))]
    return x


def shuffled_minibatches(key: jax.Array, batch: Any, num_minibatches: int) -> Any:
    """One epoch's minibatches: every leaf of `batch` (`[B, ...]`, the same B) permuted by
    `permutation(key, B)` and cut into `[num_minibatches, B / num_minibatches, ...]`, ready for a
    `lax.scan` over minibatches (B divisible by `num_minibatches`, checked by the configs)."""
    n = jax.tree.leaves(batch)[0].shape[0]
    perm = permutation(key, n)
    return jax.tree.map(
        lambda x: x[perm].reshape(num_minibatches, n // num_minibatches, *x.shape[1:]), batch)
