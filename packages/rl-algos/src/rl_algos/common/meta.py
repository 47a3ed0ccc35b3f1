"""Small meta-networks: learned pieces of an RL algorithm (a drift, a value loss) whose parameters
are found by evolution and then enter `train(key, hparams)` as *traced* inputs, so one compiled
program serves a whole population.

A meta-network is a one-hidden-layer tanh MLP `g(x) = w2 · tanh(x W1 + b1)` on a few hand-chosen
features (a plain NamedTuple of arrays: a pytree an evolution strategy can flatten, vmap and
serialise). `anchored` turns it into a function that is zero, non-negative and flat at an anchor
point, the constraints a drift (Lu et al., 2022) or a loss minimised at the target must meet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp


class MetaMLP(NamedTuple):
    """Parameters of `g: [..., F] -> [...]`: `w1 [F, H]`, `b1 [H]`, `w2 [H]` (float32)."""

    w1: jax.Array
    b1: jax.Array
    w2: jax.Array


def init_meta_mlp(key: jax.Array, num_features: int, hidden: int, scale: float = 1.0) -> MetaMLP:
    """LeCun-normal weights times `scale` (a small `scale` starts the search near g ≡ 0), zero
    bias."""
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (num_features, hidden), jnp.float32) / jnp.sqrt(num_features)
    w2 = jax.random.normal(k2, (hidden,), jnp.float32) / jnp.sqrt(hidden)
    return MetaMLP(scale * w1, jnp.zeros((hidden,), jnp.float32), scale * w2)


def meta_mlp(p: MetaMLP, x: jax.Array) -> jax.Array:
    """`x [..., F] -> [...]`."""
    return jnp.tanh(x @ p.w1 + p.b1) @ p.w2


def anchored(g: Callable[[jax.Array], jax.Array], x: jax.Array, x0: jax.Array) -> jax.Array:
    """ReLU(g(x) − g(x0) − (x − x0)·g′(x0)), elementwise over `x` and `x0` (same shape; `g` acts
    elementwise, e.g. a meta-MLP of features of x).

    Subtracting the first-order Taylor expansion at x0 makes the result vanish with zero slope at
    x = x0 whatever the parameters, so the ReLU keeps it non-negative *and* differentiable there
    (the inside is O((x − x0)²)): exactly the conditions of a valid drift at ratio 1 (LPO) or of a
    loss minimised at prediction = target."""
    g0, dg0 = jax.jvp(g, (x0,), (jnp.ones_like(x0),))
    return jax.nn.relu(g(x) - g0 - (x - x0) * dg0)
