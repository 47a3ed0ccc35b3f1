"""The orthogonal initialiser under vmap: per member the same weights as unbatched, and no batched
QR in the compiled program (a batched LAPACK QR is what deadlocks jaxlib's CPU thread pool when a
program runs two at once; see docs/stress-many-seeds.md)."""

from __future__ import annotations

import re

import jax
import numpy as np

from rl_algos.common import orthogonal_weight


def _init(key):
    return orthogonal_weight(key, (64, 4), 2.0**0.5)


def test_vmapped_equals_unbatched_and_is_orthogonal() -> None:
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    batched = jax.jit(jax.vmap(_init))(keys)
    for i in range(8):
        np.testing.assert_array_equal(batched[i], jax.jit(_init)(keys[i]))
    w = np.asarray(batched[3])
    np.testing.assert_allclose(w.T @ w, 2.0 * np.eye(4), atol=1e-5)
    assert not np.array_equal(batched[0], batched[1])


def test_no_batched_qr_in_the_vmapped_program() -> None:
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    hlo = jax.jit(jax.vmap(_init)).lower(keys).compile().as_text()
    qr_calls = [ln for ln in hlo.splitlines() if "geqrf" in ln and "custom-call" in ln]
    assert qr_calls, "expected the QR to lower to a LAPACK custom call"
    for ln in qr_calls:
        # The operand of every QR is one matrix `f32[64,4]`, never a batch `f32[8,64,4]`.
        assert not re.search(r"f32\[8,", ln), ln
