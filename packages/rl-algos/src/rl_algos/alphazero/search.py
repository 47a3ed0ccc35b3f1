"""Gumbel MuZero's search (Danihelka et al., 2022) as `mctx.gumbel_muzero_policy` computes it,
with the backup written over the whole batch.

mctx's `search` backs each simulation's value up the tree with `jax.vmap` over a `while_loop`
whose carry is the whole tree. A vmapped loop with a per-game condition runs until every game's
backup is done and, on each iteration, selects between the old and the new value of every array
it updates: each simulation copies the tree's `[B, num_simulations + 1, A]` edge arrays once per
level of its path, O(B · S · A) per level where the bookkeeping needs O(B). On a 2-core CPU that
copying was about 40% of a 64-simulation search of 2 × 64 tic_tac_toe games
(`tools/bench_search.py`: this search in 0.60× mctx's time). `_backup` below walks every game up
one level per iteration over the node and edge arrays alone and writes only the nodes on the
paths (a game already at the root writes nothing); under `vmap` (members trained at once) its
own batching rule folds the vmapped axis into the games', so that the loop stays one. It
computes mctx's backup: `test_alphazero.py` compares whole trees.

Everything else is mctx's own code (pinned to 0.0.71 in rl-envs-adapters' `pgx` extra, whose
private modules this imports): the traversal, the expansion, the Gumbel root selection with
Sequential Halving, the completed Q-values and the improved policy.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.common.batching import with_batch_axis


def backward(tree: Any, leaf_index: jax.Array) -> Any:
    """mctx's backup for a batch: from each game's new leaf `leaf_index [B]` to the root, every
    node's mean value and visit count, and its parent's child value and visit count of the edge
    taken, updated as `mctx._src.search.backward` does one game at a time."""
    node_values, node_visits, children_values, children_visits = _backup(
        tree.node_values, tree.node_visits, tree.children_values, tree.children_visits,
        tree.parents, tree.action_from_parent, tree.children_rewards, tree.children_discounts,
        leaf_index.astype(jnp.int32))
    return tree.replace(node_values=node_values, node_visits=node_visits,
                        children_values=children_values, children_visits=children_visits)


@jax.custom_batching.custom_vmap
def _backup(node_values: jax.Array, node_visits: jax.Array, children_values: jax.Array,
            children_visits: jax.Array, parents: jax.Array, action_from_parent: jax.Array,
            children_rewards: jax.Array, children_discounts: jax.Array, leaf: jax.Array
            ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The backup over the tree's arrays (`[B, N]` per node, `[B, N, A]` per edge), walking
    every game up one level per iteration; a game already at the root writes nothing."""
    root = 0  # mctx's Tree.ROOT_INDEX
    batch, num_nodes = node_values.shape
    rows = jnp.arange(batch)

    def body(state: Any) -> Any:
        node_values, node_visits, children_values, children_visits, leaf_value, index = state
        active = index != root
        parent = jnp.where(active, parents[rows, index], root)
        action = jnp.where(active, action_from_parent[rows, index], 0)
        count = node_visits[rows, parent]
        value = (children_rewards[rows, parent, action]
                 + children_discounts[rows, parent, action] * leaf_value)
        parent_value = (node_values[rows, parent] * count + value) / (count + 1.0)
        child_value = node_values[rows, index]
        child_visits = children_visits[rows, parent, action] + 1
        # A game already at the root writes past the end: `mode="drop"` leaves its tree as is.
        target = jnp.where(active, parent, num_nodes)
        return (node_values.at[rows, target].set(parent_value, mode="drop"),
                node_visits.at[rows, target].set(count + 1, mode="drop"),
                children_values.at[rows, target, action].set(child_value, mode="drop"),
                children_visits.at[rows, target, action].set(child_visits, mode="drop"),
                jnp.where(active, value, leaf_value), parent)

    state = (node_values, node_visits, children_values, children_visits,
             node_values[rows, leaf], leaf)
    return jax.lax.while_loop(lambda s: jnp.any(s[-1] != root), body, state)[:4]


@_backup.def_vmap
def _backup_vmap(axis_size: int, in_batched: list[bool], *args: jax.Array
                 ) -> tuple[tuple[jax.Array, ...], tuple[bool, ...]]:
    """Under `vmap` (members, a sweep's settings) the games of every batch walk up in one loop:
    a vmapped `while_loop` would carry and select the whole tree on every level again."""
    args = with_batch_axis(args, tuple(in_batched), axis_size)
    out = _backup(*(x.reshape(-1, *x.shape[2:]) for x in args))
    return tuple(x.reshape(axis_size, -1, *x.shape[1:]) for x in out), (True,) * 4


def search(params: Any, rng_key: jax.Array, *, root: Any, recurrent_fn: Any,
           root_action_selection_fn: Any, interior_action_selection_fn: Any,
           num_simulations: int, invalid_actions: jax.Array, extra_data: Any) -> Any:
    """`mctx.search` (no depth limit) with the batched `backward`: the search tree after
    `num_simulations` simulations from the roots `[B]`."""
    from mctx import Tree
    from mctx._src import search as mctx_search
    from mctx._src.action_selection import switching_action_selection_wrapper

    batch = root.value.shape[0]
    rows = jnp.arange(batch)
    select = switching_action_selection_wrapper(
        root_action_selection_fn=root_action_selection_fn,
        interior_action_selection_fn=interior_action_selection_fn)

    def simulation(sim: jax.Array, state: tuple[jax.Array, Any]) -> tuple[jax.Array, Any]:
        rng_key, tree = state
        rng_key, simulate_key, expand_key = jax.random.split(rng_key, 3)
        parent, action = mctx_search.simulate(
            jax.random.split(simulate_key, batch), tree, select, num_simulations)
        # A node first expanded in simulation `sim` has index `sim + 1` (the root is 0).
        node = tree.children_index[rows, parent, action]
        node = jnp.where(node == Tree.UNVISITED, sim + 1, node)
        tree = mctx_search.expand(params, expand_key, tree, recurrent_fn, parent, action, node)
        return rng_key, backward(tree, node)

    tree = mctx_search.instantiate_tree_from_root(root, num_simulations, invalid_actions,
                                                  extra_data)
    return jax.lax.fori_loop(0, num_simulations, simulation, (rng_key, tree))[1]


def gumbel_muzero_policy(params: Any, rng_key: jax.Array, root: Any, recurrent_fn: Any,
                         num_simulations: int, invalid_actions: jax.Array, *,
                         max_num_considered_actions: int, gumbel_scale: float) -> Any:
    """`mctx.gumbel_muzero_policy` (its default completed-Q transform, no depth limit) over
    `search` above: the same `PolicyOutput` (action, improved policy `action_weights`, tree)."""
    import mctx
    from mctx._src import seq_halving
    from mctx._src.action_selection import masked_argmax
    from mctx._src.policies import _mask_invalid_actions

    qtransform = mctx.qtransform_completed_by_mix_value
    root = root.replace(prior_logits=_mask_invalid_actions(root.prior_logits, invalid_actions))
    rng_key, gumbel_key = jax.random.split(rng_key)
    gumbel = gumbel_scale * jax.random.gumbel(gumbel_key, root.prior_logits.shape,
                                              root.prior_logits.dtype)
    tree = search(
        params, rng_key, root=root, recurrent_fn=recurrent_fn,
        root_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_root_action_selection, num_simulations=num_simulations,
            max_num_considered_actions=max_num_considered_actions, qtransform=qtransform),
        interior_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_interior_action_selection, qtransform=qtransform),
        num_simulations=num_simulations, invalid_actions=invalid_actions,
        extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel))
    visits = tree.summary().visit_counts
    completed_q = jax.vmap(qtransform, in_axes=[0, None])(tree, tree.ROOT_INDEX)
    score = seq_halving.score_considered(jnp.max(visits, axis=-1, keepdims=True), gumbel,
                                         root.prior_logits, completed_q, visits)
    return mctx.PolicyOutput(
        action=masked_argmax(score, invalid_actions),
        action_weights=jax.nn.softmax(
            _mask_invalid_actions(root.prior_logits + completed_q, invalid_actions)),
        search_tree=tree)
