"""PQN's Q-network: LayerNorm after every hidden layer (the regularisation that lets PQN drop
the target network, Gallici et al., 2024, Section 4), a small convolution first when the
observation is an image `[H, W, C]` (MinAtar, board planes) and `cnn_channels > 0`, dense layers
on the flattened observation otherwise."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import orthogonal_linear


class QNetwork(eqx.Module):
    conv: eqx.nn.Conv2d | None
    conv_norm: eqx.nn.LayerNorm | None
    layers: list[eqx.nn.Linear]
    norms: list[eqx.nn.LayerNorm]
    head: eqx.nn.Linear

    def __init__(self, key: jax.Array, obs_shape: tuple[int, ...], num_actions: int,
                 hidden_size: int, num_layers: int, cnn_channels: int):
        k_conv, k_head, *k_layers = jax.random.split(key, 2 + num_layers)
        if len(obs_shape) == 3 and cnn_channels > 0:  # [H, W, C] image
            h, w, c = obs_shape
            self.conv = eqx.nn.Conv2d(c, cnn_channels, 3, padding=1, key=k_conv)
            self.conv_norm = eqx.nn.LayerNorm((cnn_channels, h, w))
            d_in = cnn_channels * h * w
        else:
            self.conv, self.conv_norm = None, None
            d_in = int(math.prod(obs_shape))
        sizes = [d_in] + [hidden_size] * num_layers
        self.layers = [orthogonal_linear(k, a, b, 2.0**0.5)
                       for k, a, b in zip(k_layers, sizes[:-1], sizes[1:], strict=True)]
        self.norms = [eqx.nn.LayerNorm(hidden_size) for _ in range(num_layers)]
        self.head = orthogonal_linear(k_head, hidden_size, num_actions, 1.0)

    def __call__(self, obs: jax.Array) -> jax.Array:
        x = obs.astype(jnp.float32)
        if self.conv is not None and self.conv_norm is not None:
            x = jax.nn.relu(self.conv_norm(self.conv(jnp.transpose(x, (2, 0, 1)))))
        x = x.reshape(-1)
        for layer, norm in zip(self.layers, self.norms, strict=True):
            x = jax.nn.relu(norm(layer(x)))
        return self.head(x)
