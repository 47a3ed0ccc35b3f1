"""Observation transforms, written once against the port: flattening a structured observation
into one vector (keeping where each part lives, for a convolution over it), and hiding entries
of a vector observation (a partially observed version of a task)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.spaces import Box
from rl_core.types import TimeStep
from rl_core.wrappers import TimeStepMap, batch_ndim


def flatten_observation(obs: Any, batch_ndim: int = 0) -> jax.Array:
    """Concatenates every leaf of an observation pytree into one float32 vector per batch element:
    `[*batch, D]`. Leaves are taken in pytree order (sorted keys for dicts, field order for
    NamedTuples), so the layout is deterministic."""
    leaves = jax.tree.leaves(obs)
    batch = leaves[0].shape[:batch_ndim]
    return jnp.concatenate(
        [jnp.reshape(x, (*batch, -1)).astype(jnp.float32) for x in leaves], axis=-1
    )


class ObservationTransform(TimeStepMap):
    """A wrapper that maps every observation (and `info["final_observation"]`) through
    `transform` and leaves everything else alone."""

    def transform(self, obs: Any) -> Any:
        raise NotImplementedError

    def map_timestep(self, ts: TimeStep) -> TimeStep:
        info = dict(ts.info)
        if "final_observation" in info:
            info["final_observation"] = self.transform(info["final_observation"])
        return ts._replace(observation=self.transform(ts.observation), info=info)


class FlattenObservation(ObservationTransform):
    """Turns any observation (an image, a nested NamedTuple) into a flat float32 vector, for MLPs.
    Networks that need the structure (a CNN over image planes) simply skip this wrapper."""

    def __init__(self, env: Any):
        super().__init__(env)
        self._bn = batch_ndim(env)
        sizes = [int(np.prod(s.shape)) for s in jax.tree.leaves(
            env.observation_space, is_leaf=lambda s: hasattr(s, "shape"))]
        self._space = Box(-np.inf, np.inf, (sum(sizes),), jnp.float32)

    @property
    def observation_space(self) -> Box:
        return self._space

    def transform(self, obs: Any) -> jax.Array:
        return flatten_observation(obs, self._bn)


def _is_box(x: Any) -> bool:
    return isinstance(x, Box)


class FlattenStructuredObservation(ObservationTransform):
    """A structured observation (a dict / NamedTuple pytree of arrays, as Jumanji's are) as one
    float32 vector `[D]`, with a `Box` space that keeps every part's bounds, for one environment
    whose `observation_space` is the same pytree of `Box`es.

    Unlike `FlattenObservation` (which sits above `VectorEnv` and forgets bounds), it wraps the
    backend's environment itself, so every wrapper and algorithm above sees an ordinary `Box`
    observation. It remembers the layout: `unflatten(x)` takes `[..., D]` (any leading batch axes)
    back to the pytree of `[..., *part_shape]` arrays, so a network that needs an image-like part
    (a CNN over a grid) asks for it from the flat vector it is given; `layout` names each part's
    `(offset, shape)`. Parts are concatenated in pytree order (sorted keys for dicts, field order
    for NamedTuples). `info["final_observation"]`, when present, is flattened the same way.
    """

    def __init__(self, env: Any):
        super().__init__(env)
        parts, treedef = jax.tree.flatten(env.observation_space, is_leaf=_is_box)
        self._treedef: Any = treedef
        if not parts or not all(isinstance(s, Box) for s in parts):
            raise ValueError(
                "FlattenStructuredObservation needs an observation_space that is a pytree of Box "
                f"spaces (one per observation part), got {env.observation_space!r}")
        self._shapes = [tuple(s.shape) for s in parts]
        self._sizes = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]
        self._offsets = [int(o) for o in np.cumsum([0, *self._sizes[:-1]])]
        low = np.concatenate([s.low.reshape(-1) for s in parts])
        high = np.concatenate([s.high.reshape(-1) for s in parts])
        self._space = Box(low, high, (sum(self._sizes),), jnp.float32)
        paths = jax.tree_util.tree_flatten_with_path(env.observation_space, is_leaf=_is_box)[0]
        self.layout: dict[str, tuple[int, tuple[int, ...]]] = {
            jax.tree_util.keystr(path, simple=True, separator="/"): (off, shape)
            for (path, _), off, shape in zip(paths, self._offsets, self._shapes, strict=True)
        }

    @property
    def observation_space(self) -> Box:
        return self._space

    def flatten(self, obs: Any) -> jax.Array:
        """Pytree of `[..., *part_shape]` -> float32 `[..., D]`."""
        leaves, treedef = jax.tree.flatten(obs)
        if treedef != self._treedef:
            raise ValueError(f"observation structure {treedef} differs from the observation "
                             f"space's {self._treedef}")
        batch = jnp.shape(leaves[0])[: jnp.ndim(leaves[0]) - len(self._shapes[0])]
        return jnp.concatenate(
            [jnp.reshape(x, (*batch, n)).astype(jnp.float32)
             for x, n in zip(leaves, self._sizes, strict=True)], axis=-1)

    def unflatten(self, flat: jax.Array) -> Any:
        """float32 `[..., D]` -> the observation pytree, each part `[..., *part_shape]`."""
        batch = flat.shape[:-1]
        parts = [jnp.reshape(flat[..., o:o + n], (*batch, *s))
                 for o, n, s in zip(self._offsets, self._sizes, self._shapes, strict=True)]
        return jax.tree.unflatten(self._treedef, parts)

    def transform(self, obs: Any) -> jax.Array:
        return self.flatten(obs)


class MaskObservation(ObservationTransform):
    """Hides part of a vector observation: only the entries at the indices `keep` of its last
    axis remain, in the order given (`MaskObservation(cartpole, keep=(0, 2))` sees the cart's
    position and the pole's angle but not their velocities, a partially observed task that needs
    memory). The `Box` space keeps those entries' bounds. It works below or above `VectorEnv`
    (the index is on the last axis), and masks `info["final_observation"]` the same way."""

    layout = None  # not the parts of a structured observation any more (see image_part)

    def __init__(self, env: Any, keep: Any):
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, Box) or len(space.shape) != 1:
            raise ValueError("MaskObservation needs a vector observation (a 1-D Box), got "
                             f"{space!r}")
        keep = tuple(int(i) for i in np.atleast_1d(np.asarray(keep)))
        d = int(space.shape[0])
        if not keep or any(not 0 <= i < d for i in keep) or len(set(keep)) != len(keep):
            raise ValueError(f"MaskObservation keeps distinct indices of the observation's {d} "
                             f"entries (0 to {d - 1}), got {keep}")
        self.keep = keep
        self._index = np.asarray(keep, np.int32)
        low = np.broadcast_to(np.asarray(space.low), space.shape)[self._index]
        high = np.broadcast_to(np.asarray(space.high), space.shape)[self._index]
        self._space = Box(low, high, (len(keep),), space.dtype)

    @property
    def observation_space(self) -> Box:
        return self._space

    def transform(self, obs: Any) -> jax.Array:
        return obs[..., self._index]

    def __repr__(self) -> str:
        return f"MaskObservation({self.env!r}, keep={self.keep})"
