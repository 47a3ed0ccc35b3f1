"""TD3's networks: a deterministic actor squashed into [-1, 1] by tanh, and twin Q-critics
stacked into one module (one batched matmul per layer serves both). Layers use Equinox's default
initialisation (uniform in ±1/sqrt(fan_in), that of the paper's PyTorch code)."""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import ACTIVATIONS


class DenseStack(eqx.Module):
    """`x [d_in] -> [d_out]`: hidden layers with an activation, then a linear output layer."""

    layers: list[eqx.nn.Linear]
    activation: str = eqx.field(static=True)

    def __init__(self, key: jax.Array, d_in: int, hidden: Sequence[int], d_out: int,
                 activation: str):
        sizes = [d_in, *hidden, d_out]
        keys = jax.random.split(key, len(sizes) - 1)
        self.layers = [eqx.nn.Linear(a, b, key=k)
                       for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=True)]
        self.activation = activation

    def __call__(self, x: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.activation]
        for layer in self.layers[:-1]:
            x = act(layer(x))
        return self.layers[-1](x)


class Actor(eqx.Module):
    """`observation [D] -> action [A]` in [-1, 1] (tanh); the caller rescales to the bounds."""

    net: DenseStack

    def __init__(self, key: jax.Array, d_obs: int, d_action: int, hidden: Sequence[int],
                 activation: str):
        self.net = DenseStack(key, d_obs, hidden, d_action, activation)

    def __call__(self, obs: jax.Array) -> jax.Array:
        return jnp.tanh(self.net(obs))


class TwinCritic(eqx.Module):
    """`(observation [D], action [A]) -> [num_critics]` Q-values of independently initialised
    critics whose parameters are stacked along a leading axis."""

    nets: DenseStack

    def __init__(self, key: jax.Array, d_obs: int, d_action: int, hidden: Sequence[int],
                 activation: str, num_critics: int = 2):
        def one(k: jax.Array) -> DenseStack:
            return DenseStack(k, d_obs + d_action, hidden, 1, activation)

        self.nets = eqx.filter_vmap(one)(jax.random.split(key, num_critics))

    def __call__(self, obs: jax.Array, action: jax.Array) -> jax.Array:
        x = jnp.concatenate([obs, action], axis=-1)
        return eqx.filter_vmap(lambda net: net(x)[0])(self.nets)
