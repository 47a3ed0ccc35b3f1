"""The one definition of the final return, on NumPy (host) and inside a compiled program."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import FINAL_RETURN_WINDOW, final_return


def test_final_return_window() -> None:
    assert FINAL_RETURN_WINDOW == 0.05
    # 10 updates: 5% rounds to 0 updates, so the last update alone counts (return 90).
    sums, counts = np.arange(10, dtype=np.float32) * 10, np.ones(10, np.float32)
    assert final_return(sums, counts) == pytest.approx(90.0)
    # 60 updates: 3 updates, returns 570, 580, 590 -> 580.
    sums, counts = np.arange(60, dtype=np.float32) * 10, np.ones(60, np.float32)
    assert final_return(sums, counts) == pytest.approx(580.0)
    assert final_return(sums, counts, window=0.5) == pytest.approx(np.mean(sums[30:]))
    with pytest.raises(ValueError):
        final_return(sums, counts, window=0.0)


def test_final_return_numpy_and_jit_agree() -> None:
    sums = np.array([[0.0, 0.0, 30.0, 40.0], [5.0, 0.0, 0.0, 0.0]], np.float32)
    counts = np.array([[0.0, 0.0, 3.0, 1.0], [1.0, 0.0, 0.0, 0.0]], np.float32)
    host = final_return(sums, counts, window=0.5)  # last 2 updates
    assert isinstance(host, np.ndarray)
    assert host[0] == 17.5 and math.isnan(host[1])
    dev = jax.jit(lambda s, c: final_return(s, c, window=0.5))(jnp.asarray(sums),
                                                                jnp.asarray(counts))
    np.testing.assert_array_equal(np.asarray(dev), host)
