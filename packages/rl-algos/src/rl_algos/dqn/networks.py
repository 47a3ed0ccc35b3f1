"""DQN's Q-network: the shared `QNetwork` (an optional 3x3 convolution for image observations, dense
layers, here without LayerNorm by default) with a plain linear head, or a dueling head (Wang,
Schaul, Hessel, van Hasselt, Lanctot and de Freitas, 2016, "Dueling Network Architectures for Deep
Reinforcement Learning", Eq. 9): a scalar value stream and an advantage stream over the shared
torso, combined as `Q(s, a) = V(s) + A(s, a) - mean_a' A(s, a')`. Both streams are linear heads
on the torso's last hidden layer (the paper gives each stream a hidden layer of its own)."""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import orthogonal_linear
from rl_algos.common.qnetwork import QNetwork


def dueling_aggregate(value: jax.Array, advantages: jax.Array) -> jax.Array:
    """`Q = V + A - mean(A)` for `value [...]` and `advantages [..., A]`: the advantages are
    made identifiable by subtracting their mean over all actions (Wang et al., 2016, Eq. 9),
    so `mean_a Q(s, a) = V(s)`."""
    return value[..., None] + advantages - jnp.mean(advantages, axis=-1, keepdims=True)


class DQNNetwork(eqx.Module):
    """`obs [*obs_shape] -> Q [num_actions]`. `q` is the shared `QNetwork` (its head gives Q, or the
    advantages when `value` is set: the dueling head's value stream)."""

    q: QNetwork
    value: eqx.nn.Linear | None

    def __init__(self, key: jax.Array, obs_shape: tuple[int, ...], num_actions: int,
                 hidden_sizes: Sequence[int], cnn_channels: int, activation: str,
                 layer_norm: bool, dueling: bool):
        k_q, k_value = jax.random.split(key)
        self.q = QNetwork(k_q, obs_shape, num_actions, 0, 0, cnn_channels,
                          hidden_sizes=hidden_sizes, layer_norm=layer_norm,
                          activation=activation)
        width = int(self.q.head.weight.shape[1])
        self.value = orthogonal_linear(k_value, width, 1, 1.0) if dueling else None

    def __call__(self, obs: jax.Array) -> jax.Array:
        if self.value is None:
            return self.q(obs)
        h = self.q.features(obs)
        return dueling_aggregate(self.value(h)[0], self.q.head(h))
