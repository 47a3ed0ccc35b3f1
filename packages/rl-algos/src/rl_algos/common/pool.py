"""A pool of the learner's past snapshots for self-play training (`pool_size > 0`).

Self-play against the current policy alone can chase its own tail: the learner keeps beating the
opponent it just was and forgets how to beat older ones. Keeping earlier versions as opponents is
the fix of fictitious self-play (Heinrich, Lanctot and Silver, 2015) and of AlphaStar's league
(Vinyals et al., 2019); this is its simplest form, a ring of the last snapshots sampled
uniformly.

The rule (`PoolConfig`): the parameters at update 0 are the first snapshot, and after every
`pool_every`-th update the new parameters overwrite the oldest of the `pool_size` slots. Each
rollout draws one slot uniformly among the filled ones; in the first `pool_games` of the
environments (fixed columns) that snapshot chooses player 1's moves and the learner player 0's
(the environment draws who moves first, so the learner opens half of those games); the other
environments are self-play against the current policy. The snapshot acts exactly as the learner
would with its own parameters (the same exploration), with the same noise: in any one step an
environment uses one of the two actions only.

Needs a self-play environment whose `info["player"]` (int32 []) names the player to move (the
pgx self-play environment, `opponent="self"`). Shapes: `K` slots, `N` environments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_algos.common.config import check_ranges, require


@dataclass(frozen=True)
class PoolConfig:
    """Static fields of the snapshot pool, mixed into a self-play algorithm's config.

    `pool_size = 0` (the default) is pure self-play: the current policy plays every seat."""

    pool_size: int = 0  # K: past snapshots kept (0: no pool)
    pool_every: int = 20  # updates between two snapshots
    pool_fraction: float = 0.5  # share of the environments whose player 1 is a snapshot

    def pool_games(self, num_envs: int) -> int:
        """The environments (the first ones) played against a snapshot."""
        return round(self.pool_fraction * num_envs) if self.pool_size else 0

    def validate(self) -> None:
        """The pool's ranges, beside the algorithm config's own checks (cooperative: the
        config that mixes this in gives `num_envs`)."""
        super().validate()  # type: ignore[misc]
        check_ranges(self, non_negative=("pool_size",), unit=("pool_fraction",))
        require(self.pool_every >= 1, f"pool_every must be >= 1, got {self.pool_every}")
        num_envs: int = self.num_envs  # type: ignore[attr-defined]
        require(not self.pool_size or self.pool_games(num_envs) >= 1,
                f"pool_fraction={self.pool_fraction} of {num_envs} environments plays no "
                "game against the pool; raise pool_fraction or set pool_size=0")

    def require_no_pool(self, algo: str, instead: str) -> None:
        """For a variant that inherits the fields but has no pool (the recurrent ones)."""
        require(self.pool_size == 0,
                f"{algo} has no self-play snapshot pool, got pool_size={self.pool_size}; "
                f"use --algo {instead} for self-play with a pool")

    def check_pool(self, env: Any) -> None:
        """A pool needs a self-play environment."""
        if self.pool_size:
            require(getattr(env, "self_play", False),
                    f"pool_size={self.pool_size} needs a self-play environment (with pgx: "
                    "--env-arg opponent=self); set pool_size=0 against a fixed opponent")


class SnapshotPool(NamedTuple):
    """The ring of snapshots: `params` (each leaf stacked `[K, ...]`) and `added` (int32 [],
    snapshots written so far; the next goes to slot `added % K`)."""

    params: Any
    added: jax.Array


def init_pool(params: Any, size: int) -> SnapshotPool:
    """A pool whose only snapshot is `params` (the untrained network)."""
    stacked = jax.tree.map(lambda x: jnp.broadcast_to(x, (size, *x.shape)), params)
    return SnapshotPool(stacked, jnp.ones((), jnp.int32))


def add_snapshot(pool: SnapshotPool, params: Any, update: jax.Array, every: int) -> SnapshotPool:
    """`pool` with `params` written over its oldest slot when `update + 1` (the updates done,
    this one included) is a multiple of `every`; unchanged otherwise."""
    size = jax.tree.leaves(pool.params)[0].shape[0]
    due = (update + 1) % every == 0
    slot = pool.added % size
    written = jax.tree.map(lambda s, p: s.at[slot].set(p), pool.params, params)
    return SnapshotPool(jax.tree.map(lambda w, s: jnp.where(due, w, s), written, pool.params),
                        pool.added + due.astype(jnp.int32))


def draw_snapshot(pool: SnapshotPool, key: jax.Array) -> Any:
    """One filled slot's parameters, uniformly."""
    size = jax.tree.leaves(pool.params)[0].shape[0]
    slot = jax.random.randint(key, (), 0, jnp.minimum(pool.added, size))
    return jax.tree.map(lambda s: s[slot], pool.params)


def pool_mover(player: jax.Array, num_envs: int, pool_games: int) -> jax.Array:
    """bool `[N]`: where the snapshot moves now (player 1 of the first `pool_games`
    environments), from `info["player"] [N]`."""
    return _columns(num_envs, pool_games) & (player == 1)


def acting_with_pool(mine: Callable[[Any, Any], tuple[jax.Array, Any]],
                     theirs: Callable[[Any, Any], tuple[jax.Array, Any]], num_envs: int,
                     pool_games: int) -> Callable[[Any, Any], tuple[jax.Array, Any]]:
    """A rollout's `(timestep, noise) -> (action [N], extras)`: the learner's acting function
    `mine`, except where the snapshot moves (`pool_mover`), which takes `theirs`' action (the
    same acting with the snapshot's parameters, on the same noise). The learner's extras are
    kept (its value of the position, the baseline its own next move needs) with
    `extras["snapshot_moved"]` (bool [N]) added: the moves a learner must not learn its
    policy from."""

    def acting(ts: Any, noise: Any) -> tuple[jax.Array, Any]:
        action, extras = mine(ts, noise)
        other, _ = theirs(ts, noise)
        mover = pool_mover(ts.info["player"], num_envs, pool_games)
        return jnp.where(mover, other, action), {**extras, "snapshot_moved": mover}

    return acting


def pool_acting(pool: SnapshotPool, key: jax.Array,
                acting_of: Callable[[Any], Callable[[Any, Any], tuple[jax.Array, Any]]],
                params: Any, num_envs: int,
                pool_games: int) -> tuple[jax.Array, Callable[[Any, Any], tuple[jax.Array, Any]]]:
    """`(key, acting)` for one rollout against the pool: a snapshot drawn with a key split off
    `key`, and `acting_with_pool` of the learner's acting (`acting_of(params)`) and the
    snapshot's (`acting_of(snapshot)`). `acting_of` maps parameters to an acting function."""
    key, k_snap = jax.random.split(key)
    return key, acting_with_pool(acting_of(params), acting_of(draw_snapshot(pool, k_snap)),
                                 num_envs, pool_games)


def pool_epilogue(pool: SnapshotPool, params: Any, update: jax.Array, every: int, traj: Any,
                  pool_games: int) -> tuple[SnapshotPool, dict[str, jax.Array]]:
    """After an update's SGD: the pool with the new `params` added when due (`add_snapshot`)
    and the rollout's record against the pool (`pool_results` of `traj`, leaves `[T, N]`)."""
    return (add_snapshot(pool, params, update, every),
            pool_results(traj.reward, traj.terminated | traj.truncated,
                         traj.extras["snapshot_moved"], pool_games))


def pool_results(reward: jax.Array, ended: jax.Array, snapshot_moved: jax.Array,
                 pool_games: int) -> dict[str, jax.Array]:
    """The learner's record against the pool over a rollout (leaves `[T, N]`: each move's
    reward to its mover, whether the game ended with it, whether the snapshot made it):
    `pool/games`, the games against a snapshot that ended, and `pool/score`, their mean outcome
    for the learner (+1 a win, 0 a draw or a truncated game, -1 a loss; 0 when none ended:
    with tens of pool games a rollout, as the presets play, some end in every update). A
    game's last move is its winner's (or a draw's), so the learner's outcome is that move's
    reward, negated when the snapshot made it."""
    done = ended & _columns(reward.shape[-1], pool_games)
    outcome = jnp.where(snapshot_moved, -reward, reward)
    games = jnp.sum(done)
    score = jnp.sum(jnp.where(done, outcome, 0.0)) / jnp.maximum(games, 1)
    return {"pool/games": games.astype(jnp.float32), "pool/score": score}


def _columns(num_envs: int, pool_games: int) -> jax.Array:
    return jnp.asarray(np.arange(num_envs) < pool_games)
