"""The optimiser (clipped, optionally annealed: every network method builds its own from here)
and the epoch/minibatch SGD loop that the on-policy methods (PPO and its family, VPG's value
regression, PQN) share, with an optional cross-device gradient average for data parallelism
(`rl_core.parallel.data_parallel`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from rl_algos.common.shuffle import shuffled_minibatches


def clipped_optimizer(lr: Any, max_grad_norm: Any, *, kind: str = "adam",
                      anneal_updates: int | None = None, steps_per_update: int = 1,
                      parts: Callable[[Any], Any] | None = None) -> optax.GradientTransformation:
    """Global-norm clipping then Adam (eps 1e-5, as the PPO reference implementations) or RAdam
    (`kind='radam'`, PQN). With `anneal_updates`, the learning rate decays linearly to 0 over
    that many updates, stepped once per update (`steps_per_update` optimiser steps each).

    With `parts` (`params -> labels`, `"actor"` or `"critic"` per leaf: `network_parts`) each
    part's gradient is clipped by its own global norm, as MAPPO steps its actor and its critic
    (Yu et al., 2022; JaxMARL's two optimisers), so a large value gradient does not shrink the
    policy's. One Adam then steps both: Adam is per coordinate and the two step counts agree,
    so it is the arithmetic of two.

    `optax.flatten` runs clipping and the optimiser on one concatenated vector instead of leaf
    by leaf: the same arithmetic with a fraction of the (overhead-bound) small ops on CPU."""
    if anneal_updates is not None:
        base = lr

        def lr(count):  # noqa: F811  (the annealed schedule replaces the constant)
            return base * (1.0 - (count // steps_per_update) / anneal_updates)

    opt = optax.adam(lr, eps=1e-5) if kind == "adam" else optax.radam(lr)
    if parts is None:
        return optax.flatten(optax.chain(optax.clip_by_global_norm(max_grad_norm), opt))
    return optax.chain(clip_by_part(max_grad_norm, parts), optax.flatten(opt))


def clip_by_part(max_norm: Any, parts: Callable[[Any], Any]) -> optax.GradientTransformation:
    """Each part's gradient (`parts(params)`: `"actor"` or `"critic"` per leaf) clipped by its
    own global norm to at most `max_norm`."""
    clip = optax.clip_by_global_norm(max_norm)
    return optax.multi_transform({"actor": clip, "critic": clip}, parts)


def network_parts(model: Any) -> Callable[[Any], Any] | None:
    """`params -> labels` for `clipped_optimizer(parts=...)` when `model` (the network, or its
    static structure) is two networks, an actor and a centralised critic (its `actor_size` is
    set): `"critic"` for every leaf under one of its class's `CRITIC_FIELDS`, `"actor"` for the
    rest. `None` (one clip over everything) for any other network."""
    if getattr(model, "actor_size", None) is None:
        return None
    critic_fields = type(model).CRITIC_FIELDS

    def labels(params: Any) -> Any:
        return jax.tree_util.tree_map_with_path(
            lambda path, _: "critic" if path[0].name in critic_fields else "actor", params)

    return labels


GradFn = Callable[[Any, Any], tuple[tuple[jax.Array, dict[str, jax.Array]], Any]]


def sgd_epochs(grad_fn: GradFn, tx: optax.GradientTransformation, params: Any, opt_state: Any,
               batch: Any, key: jax.Array, num_epochs: int, num_minibatches: int,
               axis_name: str | None = None) -> tuple[Any, Any, dict[str, jax.Array]]:
    """`num_epochs` passes over `batch` (leaves `[B, ...]`), each a `lax.scan` over
    `num_minibatches` shuffled minibatches (`shuffled_minibatches`, one key per epoch from
    `key`), one `tx` step per minibatch. `grad_fn(params, minibatch) -> ((loss, metrics),
    grads)`. With `axis_name`, gradients and metrics are averaged over that device axis before
    the step, so every device applies the whole minibatch's gradient. Returns the new params
    and optimiser state and the metrics averaged over every step."""

    def minibatch_step(state, mb):
        params, opt_state = state
        (_, metrics), grads = grad_fn(params, mb)
        if axis_name is not None:
            grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), metrics

    def epoch(state, k):
        return jax.lax.scan(minibatch_step, state,
                            shuffled_minibatches(k, batch, num_minibatches))

    (params, opt_state), metrics = jax.lax.scan(epoch, (params, opt_state),
                                                jax.random.split(key, num_epochs))
    return params, opt_state, jax.tree.map(jnp.mean, metrics)


def annealed_optimizer(config: Any, kind: str = "adam",
                       steps_per_update: int | None = None, model: Any = None
                       ) -> Callable[[Any], optax.GradientTransformation]:
    """`hp -> clipped_optimizer(hp.lr, hp.max_grad_norm)` of an algorithm whose `config` has
    `anneal_lr` (the rate decays linearly to 0 over `config.num_updates`) and takes
    `steps_per_update` optimiser steps per update (default: its epochs times minibatches);
    `model` (the network's structure) clips an actor and a centralised critic apart
    (`network_parts`)."""
    anneal = config.num_updates if config.anneal_lr else None
    steps = (config.num_epochs * config.num_minibatches if steps_per_update is None
             else steps_per_update)
    parts = network_parts(model)
    return lambda hp: clipped_optimizer(hp.lr, hp.max_grad_norm, kind=kind,
                                        anneal_updates=anneal, steps_per_update=steps,
                                        parts=parts)
