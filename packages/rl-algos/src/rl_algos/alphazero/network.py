"""AlphaZero's policy-value network: the mover's observation planes `[H, W, C]` (or a vector)
-> (policy logits `[A]`, value `[]` in [-1, 1], the mover's expected outcome). An MLP on the
flattened planes, or (`num_blocks > 0`) AlphaZero's residual tower of 3x3 convolutions (Silver et
al., 2018) with LayerNorm in place of batch normalisation (no running statistics to carry)."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import orthogonal_linear


class _Block(eqx.Module):
    conv1: eqx.nn.Conv2d
    norm1: eqx.nn.LayerNorm
    conv2: eqx.nn.Conv2d
    norm2: eqx.nn.LayerNorm

    def __init__(self, key: jax.Array, channels: int, h: int, w: int):
        k1, k2 = jax.random.split(key)
        self.conv1 = eqx.nn.Conv2d(channels, channels, 3, padding=1, key=k1)
        self.norm1 = eqx.nn.LayerNorm((channels, h, w))
        self.conv2 = eqx.nn.Conv2d(channels, channels, 3, padding=1, key=k2)
        self.norm2 = eqx.nn.LayerNorm((channels, h, w))

    def __call__(self, x: jax.Array) -> jax.Array:
        y = jax.nn.relu(self.norm1(self.conv1(x)))
        return jax.nn.relu(x + self.norm2(self.conv2(y)))


class PolicyValueNet(eqx.Module):
    """See the module docstring; one unbatched observation in, vmap for a batch."""

    stem: eqx.nn.Conv2d | None
    blocks: list[_Block]
    layers: list[eqx.nn.Linear]
    norms: list[eqx.nn.LayerNorm]
    policy_head: eqx.nn.Linear
    value_head: eqx.nn.Linear

    def __init__(self, key: jax.Array, obs_shape: tuple[int, ...], num_actions: int,
                 hidden_size: int, num_layers: int, num_blocks: int, channels: int):
        k_stem, k_pol, k_val, k_blocks, k_layers = jax.random.split(key, 5)
        if num_blocks > 0:
            if len(obs_shape) != 3:
                raise ValueError(f"num_blocks > 0 needs board planes [H, W, C], got {obs_shape}")
            h, w, c = obs_shape
            self.stem = eqx.nn.Conv2d(c, channels, 3, padding=1, key=k_stem)
            self.blocks = [_Block(k, channels, h, w)
                           for k in jax.random.split(k_blocks, num_blocks)]
            d_in = channels * h * w
        else:
            self.stem, self.blocks = None, []
            d_in = int(math.prod(obs_shape))
        sizes = [d_in] + [hidden_size] * num_layers
        self.layers = [orthogonal_linear(k, a, b, 2.0**0.5) for k, a, b in
                       zip(jax.random.split(k_layers, num_layers), sizes[:-1], sizes[1:],
                           strict=True)]
        self.norms = [eqx.nn.LayerNorm(hidden_size) for _ in range(num_layers)]
        self.policy_head = orthogonal_linear(k_pol, hidden_size, num_actions, 0.01)
        self.value_head = orthogonal_linear(k_val, hidden_size, 1, 1.0)

    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = obs.astype(jnp.float32)
        if self.stem is not None:
            x = jnp.transpose(x, (2, 0, 1))
            x = jax.nn.relu(self.stem(x))
            for block in self.blocks:
                x = block(x)
        x = x.reshape(-1)
        for layer, norm in zip(self.layers, self.norms, strict=True):
            x = jax.nn.relu(norm(layer(x)))
        return self.policy_head(x), jnp.tanh(self.value_head(x)[0])
