"""The Q-network of the value-based algorithms: LayerNorm after every hidden layer (the
regularisation that lets PQN drop the target network, Gallici et al., 2024, Section 4), a small
convolution first when the observation is an image `[H, W, C]` (MinAtar, board planes) and
`cnn_channels > 0`, dense layers on the flattened observation otherwise. DQN uses it without
LayerNorm (`layer_norm=False`) and with widths of its own (`hidden_sizes`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import ACTIVATIONS, conv3x3, orthogonal_linear


class QNetwork(eqx.Module):
    """`obs [*obs_shape] -> Q [num_actions]`: the optional convolution, `num_layers` dense layers
    of `hidden_size` (or the widths `hidden_sizes`), each with LayerNorm unless `layer_norm` is
    False (DQN's plain network), and a linear head. `features` is everything but the head."""

    conv: eqx.nn.Conv2d | None
    conv_norm: eqx.nn.LayerNorm | None
    layers: list[eqx.nn.Linear]
    norms: list[eqx.nn.LayerNorm]
    head: eqx.nn.Linear
    activation: str = eqx.field(static=True, default="relu")

    def __init__(self, key: jax.Array, obs_shape: tuple[int, ...], num_actions: int,
                 hidden_size: int, num_layers: int, cnn_channels: int, *,
                 hidden_sizes: Sequence[int] | None = None, layer_norm: bool = True,
                 activation: str = "relu"):
        widths = [hidden_size] * num_layers if hidden_sizes is None else list(hidden_sizes)
        k_conv, k_head, *k_layers = jax.random.split(key, 2 + len(widths))
        if len(obs_shape) == 3 and cnn_channels > 0:  # [H, W, C] image
            h, w, c = obs_shape
            self.conv = eqx.nn.Conv2d(c, cnn_channels, 3, padding=1, key=k_conv)
            self.conv_norm = eqx.nn.LayerNorm((cnn_channels, h, w)) if layer_norm else None
            d_in = cnn_channels * h * w
        else:
            self.conv, self.conv_norm = None, None
            d_in = int(math.prod(obs_shape))
        sizes = [d_in, *widths]
        self.layers = [orthogonal_linear(k, a, b, 2.0**0.5)
                       for k, a, b in zip(k_layers, sizes[:-1], sizes[1:], strict=True)]
        self.norms = [eqx.nn.LayerNorm(n) for n in widths] if layer_norm else []
        self.head = orthogonal_linear(k_head, sizes[-1], num_actions, 1.0)
        self.activation = activation

    def features(self, obs: jax.Array) -> jax.Array:
        """The last hidden layer's activations `[sizes[-1]]` (the flattened input if none)."""
        act = ACTIVATIONS[self.activation]
        x = obs.astype(jnp.float32)
        if self.conv is not None:
            # The Conv2d's own parameters (`weight [O, C, 3, 3]`, `bias [O, 1, 1]`), computed as
            # `conv3x3`'s patch contraction; `[O, H, W]` after, as `self.conv(...)` returns it.
            kernel = jnp.transpose(self.conv.weight, (2, 3, 1, 0))
            bias = (jnp.zeros(kernel.shape[-1]) if self.conv.bias is None
                    else self.conv.bias[:, 0, 0])
            x = jnp.transpose(conv3x3(x, kernel, bias), (2, 0, 1))
            x = act(x if self.conv_norm is None else self.conv_norm(x))
        x = x.reshape(-1)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = act(self.norms[i](x) if self.norms else x)
        return x

    def __call__(self, obs: jax.Array) -> jax.Array:
        return self.head(self.features(obs))
