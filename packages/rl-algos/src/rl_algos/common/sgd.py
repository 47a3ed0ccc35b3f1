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
                      anneal_updates: int | None = None,
                      steps_per_update: int = 1) -> optax.GradientTransformation:
    """Global-norm clipping then Adam (eps 1e-5, as the PPO reference implementations) or RAdam
    (`kind='radam'`, PQN). With `anneal_updates`, the learning rate decays linearly to 0 over
    that many updates, stepped once per update (`steps_per_update` optimiser steps each).

    `optax.flatten` runs clipping and the optimiser on one concatenated vector instead of leaf
    by leaf: the same arithmetic with a fraction of the (overhead-bound) small ops on CPU."""
    if anneal_updates is not None:
        base = lr

        def lr(count):  # noqa: F811  (the annealed schedule replaces the constant)
            return base * (1.0 - (count // steps_per_update) / anneal_updates)

    opt = optax.adam(lr, eps=1e-5) if kind == "adam" else optax.radam(lr)
    return optax.flatten(optax.chain(optax.clip_by_global_norm(max_grad_norm), opt))


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
                       steps_per_update: int | None = None
                       ) -> Callable[[Any], optax.GradientTransformation]:
    """`hp -> clipped_optimizer(hp.lr, hp.max_grad_norm)` of an algorithm whose `config` has
    `anneal_lr` (the rate decays linearly to 0 over `config.num_updates`) and takes
    `steps_per_update` optimiser steps per update (default: its epochs times minibatches)."""
    anneal = config.num_updates if config.anneal_lr else None
    steps = (config.num_epochs * config.num_minibatches if steps_per_update is None
             else steps_per_update)
    return lambda hp: clipped_optimizer(hp.lr, hp.max_grad_norm, kind=kind,
                                        anneal_updates=anneal, steps_per_update=steps)
