"""What the `jax.custom_batching.custom_vmap` rules share.

A rule receives its operands with some batched (a leading axis of `axis_size`) and some not; the
rules here compute every game or agent in one flat call, so they first give the unbatched ones
that leading axis too."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def with_batch_axis(tree: Any, batched: Any, size: int) -> Any:
    """`tree` with every leaf that `batched` (the rule's `in_batched` for it: a tree of bools of
    the same structure, one per leaf) marks False broadcast to a leading axis of `size`: `[...]`
    to `[size, ...]`; batched leaves are returned as they are."""
    return jax.tree.map(lambda x, b: x if b else jnp.broadcast_to(x, (size, *jnp.shape(x))),
                        tree, batched)
