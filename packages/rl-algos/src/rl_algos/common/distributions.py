"""Action distributions as small static objects over plain arrays, chosen from the action space.

Each takes the network's raw output (and an optional legal-action mask) to its parameters, then
samples, scores and measures entropy. All functions are for one state; vmap them for a batch.

Sampling is split in two: `noise(key, batch_shape)` draws the randomness of many samples at once
(Gumbel noise for categoricals, standard normals for the Gaussian) and `sample_with(p, noise)`
turns one state's parameters and noise into an action; `sample(key, p)` is the two together. A
rollout draws the noise of all its steps in one call (each `jax.random` call is a loop of tiny
operations on CPU).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_core import Box, Discrete, MultiDiscrete

# Logit given to illegal actions: far below any real logit, yet finite so that
# `p * log p` stays 0 (not NaN) in the entropy.
MASKED_LOGIT = -1e9


class Categorical:
    """Softmax over `n` actions; illegal actions (mask False) get probability exactly 0. `axis`
    is where the `n` actions lie in `out`, the logits and the mask (the last axis; the first for
    a feature-major network's `[n, B]` output, `log_prob_entropy_feature_major`)."""

    def __init__(self, n: int):
        self.n = n
        self.output_size = n

    def params(self, out: jax.Array, mask: jax.Array | None = None, axis: int = -1) -> jax.Array:
        logits = jax.nn.log_softmax(out, axis=axis)
        if mask is not None:
            logits = jax.nn.log_softmax(jnp.where(mask, logits, MASKED_LOGIT), axis=axis)
        return logits

    def noise(self, key: jax.Array, batch_shape: tuple[int, ...]) -> jax.Array:
        """Gumbel noise `[*batch_shape, n]`."""
        return jax.random.gumbel(key, (*batch_shape, self.n), jnp.float32)

    def sample_with(self, logits: jax.Array, noise: jax.Array) -> jax.Array:
        """The Gumbel-max trick, as `jax.random.categorical` does it: argmax(logits + noise)."""
        return jnp.argmax(logits + noise, axis=-1).astype(jnp.int32)

    def sample(self, key: jax.Array, logits: jax.Array) -> jax.Array:
        return self.sample_with(logits, self.noise(key, logits.shape[:-1]))

    def log_prob(self, logits: jax.Array, action: jax.Array, axis: int = -1) -> jax.Array:
        index = jnp.expand_dims(action, axis).astype(jnp.int32)
        return jnp.take_along_axis(logits, index, axis=axis).squeeze(axis)

    def entropy(self, logits: jax.Array, axis: int = -1) -> jax.Array:
        return -jnp.sum(jnp.exp(logits) * logits, axis=axis)

    def mode(self, logits: jax.Array) -> jax.Array:
        return jnp.argmax(logits, axis=-1).astype(jnp.int32)


class MultiCategorical:
    """Independent categoricals over `nvec` (a factorised distribution); the output is the
    concatenation of each factor's logits, the action `[len(nvec)]` int32."""

    def __init__(self, nvec: tuple[int, ...]):
        self.nvec = tuple(nvec)
        self.output_size = sum(self.nvec)
        self._splits = [sum(self.nvec[:i]) for i in range(1, len(self.nvec))]

    def _factors(self, logits: jax.Array) -> list[jax.Array]:
        return jnp.split(logits, self._splits, axis=-1)

    def params(self, out: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        """Per-factor log-probabilities `[sum(nvec)]`. `mask` (bool `[sum(nvec)]`, the
        per-dimension masks concatenated, as `MultiDiscrete` environments give it) gives illegal
        values of each factor probability exactly 0."""
        if mask is not None:
            out = jnp.where(mask, jax.nn.log_softmax(out), MASKED_LOGIT)
        return jnp.concatenate([jax.nn.log_softmax(f) for f in self._factors(out)], axis=-1)

    def noise(self, key: jax.Array, batch_shape: tuple[int, ...]) -> jax.Array:
        """Gumbel noise `[*batch_shape, sum(nvec)]`, one slice per factor."""
        return jax.random.gumbel(key, (*batch_shape, self.output_size), jnp.float32)

    def sample_with(self, logits: jax.Array, noise: jax.Array) -> jax.Array:
        return jnp.stack([jnp.argmax(f + g, axis=-1) for f, g in
                          zip(self._factors(logits), self._factors(noise), strict=True)],
                         axis=-1).astype(jnp.int32)

    def sample(self, key: jax.Array, logits: jax.Array) -> jax.Array:
        return self.sample_with(logits, self.noise(key, logits.shape[:-1]))

    def log_prob(self, logits: jax.Array, action: jax.Array) -> jax.Array:
        per_factor = [jnp.take_along_axis(f, action[..., i : i + 1], axis=-1)[..., 0]
                      for i, f in enumerate(self._factors(logits))]
        return jnp.sum(jnp.stack(per_factor), axis=0)

    def entropy(self, logits: jax.Array) -> jax.Array:
        return jnp.sum(jnp.stack([-jnp.sum(jnp.exp(f) * f, axis=-1)
                                  for f in self._factors(logits)]), axis=0)

    def mode(self, logits: jax.Array) -> jax.Array:
        return jnp.stack([jnp.argmax(f, axis=-1) for f in self._factors(logits)],
                         axis=-1).astype(jnp.int32)


class DiagGaussian:
    """Diagonal Gaussian; parameters `(mean [d], log_std [d])`. Samples are not squashed:
    `ClipAction` clips them into the bounds at the environment, and the log-probability is that
    of the unclipped sample (as in the PPO reference implementations)."""

    def __init__(self, dim: int):
        self.dim = dim
        self.output_size = dim

    def params(self, out: Any, mask: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
        mean, log_std = out
        return mean, jnp.broadcast_to(log_std, mean.shape)

    def noise(self, key: jax.Array, batch_shape: tuple[int, ...]) -> jax.Array:
        """Standard normal noise `[*batch_shape, dim]`."""
        return jax.random.normal(key, (*batch_shape, self.dim), jnp.float32)

    def sample_with(self, p: tuple[jax.Array, jax.Array], noise: jax.Array) -> jax.Array:
        mean, log_std = p
        return mean + jnp.exp(log_std) * noise

    def sample(self, key: jax.Array, p: tuple[jax.Array, jax.Array]) -> jax.Array:
        return self.sample_with(p, self.noise(key, p[0].shape[:-1]))

    def log_prob(self, p: tuple[jax.Array, jax.Array], action: jax.Array) -> jax.Array:
        mean, log_std = p
        z = (action - mean) * jnp.exp(-log_std)
        return jnp.sum(-0.5 * z**2 - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)

    def entropy(self, p: tuple[jax.Array, jax.Array]) -> jax.Array:
        _, log_std = p
        return jnp.sum(log_std + 0.5 * (1.0 + jnp.log(2 * jnp.pi)), axis=-1)

    def mode(self, p: tuple[jax.Array, jax.Array]) -> jax.Array:
        return p[0]


def log_prob_entropy_feature_major(dist: Any, out_t: jax.Array, log_std: jax.Array | None,
                                   action: jax.Array, mask: jax.Array | None = None,
                                   ) -> tuple[jax.Array, jax.Array]:
    """`(log_prob [B], entropy [B])` of `action [B, ...]` under the distribution a network's
    feature-major output `out_t [d_out, B]` (`actor_critic_feature_major`) parameterises, with
    the legal-action `mask [B, n]` if any; `log_std` is a Gaussian's (else None). A categorical's
    terms are taken over the first axis, where the logits are (transposing them back made the
    policy head's weight gradient a slow dot on CPU); other distributions get `out_t.T`."""
    if isinstance(dist, Categorical):
        logits = dist.params(out_t, None if mask is None else mask.T, axis=0)
        return dist.log_prob(logits, action, axis=0), dist.entropy(logits, axis=0)
    out: Any = out_t.T if log_std is None else (out_t.T, log_std)
    p = dist.params(out, mask)
    return dist.log_prob(p, action), dist.entropy(p)


def distribution_for(space: Any) -> Categorical | MultiCategorical | DiagGaussian:
    if isinstance(space, Discrete):
        return Categorical(space.n)
    if isinstance(space, MultiDiscrete):
        return MultiCategorical(space.nvec)
    if isinstance(space, Box):
        if len(space.shape) != 1:
            raise ValueError(f"continuous actions must be a vector, got shape {space.shape}")
        return DiagGaussian(space.shape[0])
    raise ValueError(f"no distribution for action space {space!r}")
