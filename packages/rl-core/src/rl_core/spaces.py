"""Action and observation spaces. Built once, at environment construction, from the backend's own
spec; never traced. Each space can sample (respecting an optional legal-action mask) and check
membership, which `check_environment` uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Discrete:
    """`n` actions `0..n-1`; an action is an int32 scalar."""

    n: int
    shape: tuple[int, ...] = ()
    dtype: Any = jnp.int32

    def __post_init__(self) -> None:
        if int(self.n) < 1:
            raise ValueError(f"Discrete space needs n >= 1, got {self.n}.")
        object.__setattr__(self, "n", int(self.n))

    def sample(self, key: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        """Uniform over all actions, or over the legal ones when `mask` (bool `[n]`) is given."""
        if mask is None:
            return jax.random.randint(key, (), 0, self.n, dtype=jnp.int32)
        logits = jnp.where(mask, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits).astype(jnp.int32)

    def contains(self, x: Any) -> jax.Array:
        x = jnp.asarray(x)
        return (x.shape == ()) & jnp.issubdtype(x.dtype, jnp.integer) & (x >= 0) & (x < self.n)


@dataclass(frozen=True)
class MultiDiscrete:
    """Several independent discrete choices; action `[len(nvec)]` int32 with `a[i] < nvec[i]`."""

    nvec: tuple[int, ...]
    dtype: Any = jnp.int32

    def __post_init__(self) -> None:
        nvec = tuple(int(n) for n in np.asarray(self.nvec).reshape(-1))
        if not nvec or min(nvec) < 1:
            raise ValueError(f"MultiDiscrete needs a non-empty nvec of positive sizes, got {nvec}.")
        object.__setattr__(self, "nvec", nvec)

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.nvec),)

    def sample(self, key: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        """Each dimension uniform over its values, or over its legal ones when `mask` is given:
        bool `[sum(nvec)]`, the per-dimension masks concatenated (entry `offset_i + v` says
        whether value `v` is legal in dimension `i`; the layout of factorised logits)."""
        keys = jax.random.split(key, len(self.nvec))
        if mask is None:
            return jnp.stack([jax.random.randint(k, (), 0, n, dtype=jnp.int32)
                              for k, n in zip(keys, self.nvec, strict=True)])
        offsets = np.cumsum([0, *self.nvec[:-1]])
        return jnp.stack([
            jax.random.categorical(k, jnp.where(mask[o:o + n], 0.0, -jnp.inf)).astype(jnp.int32)
            for k, o, n in zip(keys, offsets, self.nvec, strict=True)])

    def contains(self, x: Any) -> jax.Array:
        x = jnp.asarray(x)
        if x.shape != self.shape:
            return jnp.asarray(False)
        return jnp.issubdtype(x.dtype, jnp.integer) & jnp.all((x >= 0) & (x < jnp.array(self.nvec)))


@dataclass(frozen=True, eq=False)
class Box:
    """A box `[low, high]` of the given shape (bounds may be ±inf). low/high are stored as numpy
    arrays broadcast to `shape`, so they are constants in any compiled program."""

    low: Any
    high: Any
    shape: tuple[int, ...]
    dtype: Any = jnp.float32
    _bounded: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        shape = tuple(int(s) for s in self.shape)
        low = np.broadcast_to(np.asarray(self.low, dtype=np.float32), shape).copy()
        high = np.broadcast_to(np.asarray(self.high, dtype=np.float32), shape).copy()
        if np.any(low > high):
            raise ValueError(f"Box has low > high somewhere: low={low}, high={high}.")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "_bounded", bool(np.all(np.isfinite(low) & np.isfinite(high))))

    @property
    def bounded(self) -> bool:
        return self._bounded

    def sample(self, key: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        """Uniform inside finite bounds; standard normal (clipped) where a bound is infinite."""
        low, high = jnp.asarray(self.low), jnp.asarray(self.high)
        if self._bounded:
            return jax.random.uniform(key, self.shape, self.dtype, low, high)
        return jnp.clip(jax.random.normal(key, self.shape, self.dtype), low, high)

    def contains(self, x: Any) -> jax.Array:
        x = jnp.asarray(x)
        if x.shape != self.shape:
            return jnp.asarray(False)
        return jnp.all((x >= self.low) & (x <= self.high))

    def __repr__(self) -> str:
        lo, hi = np.unique(self.low), np.unique(self.high)
        lo_s = f"{lo[0]:g}" if lo.size == 1 else "[...]"
        hi_s = f"{hi[0]:g}" if hi.size == 1 else "[...]"
        return f"Box({lo_s}, {hi_s}, {self.shape}, {np.dtype(self.dtype).name})"


Space = Discrete | MultiDiscrete | Box


def describe(space: Any) -> str:
    """A short human-readable form used by `rl envs`."""
    if isinstance(space, Discrete):
        return f"Discrete({space.n})"
    if isinstance(space, MultiDiscrete):
        return f"MultiDiscrete({list(space.nvec)})"
    if isinstance(space, Box):
        return repr(space)
    if isinstance(space, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in space.items()) + "}"
    return repr(space)
