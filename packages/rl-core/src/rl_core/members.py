"""The multi-member driver: M members (seeds, grid points, a population) of one algorithm trained
as one vmapped program, compiled once and driven in *chunks* of updates, so that progress,
logging and checkpoints happen between chunks without a host callback inside the program
(executables with host callbacks are never stored in JAX's persistent compilation cache, which
would make every run recompile). With a device mesh the member axis is sharded over the devices
(`rl_core.parallel`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax
import numpy as np

from rl_core.loops import scan_updates
from rl_core.parallel import (
    member_sharding,
    pad_members,
    padded_size,
    put_members,
    replicated,
    to_host,
    unpad_members,
)
from rl_core.types import Algorithm, TrainResult


def map_members(f: Callable[..., Any]) -> Callable[..., Any]:
    """`jax.vmap(f)` over the leading member axis of every argument leaf, except that a single
    member runs `f` unbatched and gets the axis back. A vmap of size 1 still batches every
    operation, and on the CPU some batched forms are slower than the plain ones (a dot with a
    unit batch axis; a `cond` on a batched predicate becomes a select that computes both
    branches): TD3 with one member ran 4-14% slower vmapped. The results are the same."""

    def mapped(*args: Any) -> Any:
        if all(jax.numpy.shape(x)[:1] == (1,) for x in jax.tree.leaves(args)):
            out = f(*jax.tree.map(lambda x: x[0], args))
            return jax.tree.map(lambda x: jax.numpy.asarray(x)[None], out)
        return jax.vmap(f)(*args)

    return mapped


@jax.custom_batching.custom_vmap
def any_member(pred: jax.Array) -> jax.Array:
    """`pred` (a scalar bool) for one member; under `vmap`, the OR over the members, unbatched.

    It makes `lax.cond(any_member(p), costly, cheap)` a real branch when members are vmapped: a
    `cond` on a batched predicate becomes a select that computes both branches for every member,
    where this one runs `costly` only when some member needs it. The branch must then stay
    right for the members that did not ask for it (select on the member's own `p` inside it),
    so that each member's result is what its own `cond` would have given."""
    return pred


@any_member.def_vmap
def _any_member_vmap(axis_size: int, in_batched: list[bool], pred: jax.Array):
    del axis_size
    # Through `any_member` again, so that an outer member axis (seeds of grid points) ORs too.
    return (any_member(jax.numpy.any(pred)) if in_batched[0] else pred), False


def chunk_length(num_updates: int, target_chunks: int = 50) -> int:
    """The largest divisor of `num_updates` not above `num_updates / target_chunks` (at least 1),
    so that every chunk has the same length and one compiled chunk serves the whole run."""
    limit = max(1, num_updates // max(1, target_chunks))
    small = [d for d in range(1, math.isqrt(num_updates) + 1) if num_updates % d == 0]
    divisors = small + [num_updates // d for d in small]  # O(sqrt n): a long run lists at once
    return max(d for d in divisors if d <= limit)


class ChunkReport(NamedTuple):
    """What `run_members` tells its observer after each chunk (host numpy arrays)."""

    chunk: int  # index of the finished chunk, from 0
    num_chunks: int
    updates_done: int
    metrics: dict[str, Any]  # each `[M, chunk_len]`
    elapsed: float  # seconds since the first chunk was dispatched
    health: dict[str, Any] | None = None  # `chunk_health`'s fields, each `[M]`
    init_seconds: float = 0.0  # of `elapsed`, the members' initialisation (before chunk 0)


def chunk_health(algo: Algorithm, carry: Any, metrics: dict[str, Any]) -> dict[str, Any]:
    """Whether one member's chunk stayed finite, as reductions inside the compiled program (no
    host callback): `first_nonfinite_update`, the index within the chunk of the first update with
    a NaN or infinite metric (-1: none), and `params_finite`, whether every floating leaf of the
    member's agent (`algo.agent(carry)`: parameters, observation statistics) is finite at the end
    of the chunk (True when the algorithm has no `agent`). Reads the carry, never changes it."""
    jnp = jax.numpy
    per_update = [jnp.all(jnp.isfinite(v.reshape(v.shape[0], -1)), axis=1)
                  for v in metrics.values() if jnp.issubdtype(v.dtype, jnp.inexact)]
    if per_update:
        finite = jnp.all(jnp.stack(per_update), axis=0)
        first = jnp.where(jnp.all(finite), -1, jnp.argmin(finite)).astype(jnp.int32)
    else:
        first = jnp.asarray(-1, jnp.int32)
    params_ok = jnp.asarray(True)
    if algo.agent is not None:
        leaves = [x for x in jax.tree.leaves(algo.agent(carry))
                  if jnp.issubdtype(jnp.result_type(x), jnp.inexact)]
        if leaves:
            params_ok = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))
    return {"first_nonfinite_update": first, "params_finite": params_ok}


class CompiledRun(NamedTuple):
    """A multi-member run, compiled and ready: call `run_members(compiled, ...)`.

    With a `mesh`, the programs take `num_padded` members sharded along the member axis; the
    `num_members` real ones are padded on the way in and unpadded on the way out."""

    init: Any  # compiled `(keys[M], hparams[M]) -> carry[M]`, on one device
    chunk: Any  # compiled `(carry[Mp], hparams[Mp]) -> (carry[Mp], metrics[Mp, L], health[Mp])`
    num_chunks: int
    chunk_len: int
    compile_seconds: float
    mesh: Any = None  # a jax.sharding.Mesh, or None for the default device
    num_members: int = 0
    num_padded: int = 0


def _leading(tree: Any, size: int) -> Any:
    """Abstract values of `tree` with the leading axis resized to `size`."""
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct((size, *x.shape[1:]), x.dtype), tree)


def init_members(algo: Algorithm) -> Callable[[jax.Array, Any], Any]:
    """`(keys[M], hparams[M]) -> carry[M]`, the members initialised one after another. Gives the
    same carry as `jax.vmap(algo.init)`, without batched LAPACK calls (see `compile_members`)."""
    return lambda keys, hparams: jax.lax.map(lambda a: algo.init(*a), (keys, hparams))


def chunk_program(algo: Algorithm, chunk_len: int) -> Callable[[Any, Any], Any]:
    """`(carry[M], hparams[M]) -> (carry[M], metrics[M, chunk_len], health[M])`, the function
    `compile_members` compiles (with its carry donated): `chunk_len` updates of every member and
    each member's `chunk_health`."""

    def one_member(c: Any, h: Any) -> Any:
        c, metrics = scan_updates(algo, c, h, chunk_len)
        return c, metrics, chunk_health(algo, c, metrics)

    return lambda carry, hp: map_members(one_member)(carry, hp)


def compile_members(
    algo: Algorithm,
    keys: jax.Array,
    hparams: Any,
    chunk_len: int | None = None,
    mesh: Any = None,
) -> CompiledRun:
    """Lowers and compiles the init and the chunk programs for `M = len(keys)` members (vmapped),
    timing compilation apart from running. `hparams` has a leading `[M]` axis on every leaf.

    With `mesh` (`rl_core.parallel.member_mesh`), the member axis is sharded over the mesh's
    devices (padded to a multiple of their count); the per-chunk metrics come back replicated so
    every process can read them without a gather."""
    chunk_len = chunk_length(algo.num_updates) if chunk_len is None else chunk_len
    if algo.num_updates % chunk_len:
        raise ValueError(f"chunk_len {chunk_len} must divide num_updates {algo.num_updates}.")

    chunk = chunk_program(algo, chunk_len)

    m = len(keys)
    t0 = time.perf_counter()
    # The init program runs unsharded, on one device, one member after another (`lax.map`, not
    # `vmap`): it is cheap, and on CPU (jax 0.10.2) batched LAPACK calls (the QR of orthogonal
    # initialisers) running at the same time deadlock XLA's thread pool, whether they come from a
    # wide vmap or from several devices. Its output is then padded and sharded.
    init_c = jax.jit(init_members(algo)).lower(keys, hparams).compile()
    if mesh is None:
        carry_shape = jax.eval_shape(jax.vmap(algo.init), keys, hparams)
        chunk_c = jax.jit(chunk, donate_argnums=0).lower(carry_shape, hparams).compile()
        padded = m
    else:
        padded = padded_size(m, mesh)
        shard, rep = member_sharding(mesh), replicated(mesh)
        keys_a, hp_a = _leading(keys, padded), _leading(hparams, padded)
        carry_shape = jax.eval_shape(jax.vmap(algo.init), keys_a, hp_a)
        chunk_c = jax.jit(chunk, donate_argnums=0, in_shardings=(shard, shard),
                          out_shardings=(shard, rep, rep)).lower(carry_shape, hp_a).compile()
    return CompiledRun(init_c, chunk_c, algo.num_updates // chunk_len, chunk_len,
                       time.perf_counter() - t0, mesh, m, padded)


class MembersState(NamedTuple):
    """A multi-member run between two chunks: what a checkpoint holds and a resume starts from."""

    carry: Any  # every member's carry, leading `[M]` axis (host arrays)
    updates_done: int
    metrics: dict[str, Any]  # each `[M, updates_done]`: every chunk's metrics so far


class Checkpointing(Protocol):
    """When and how `run_members` hands out the run's state between chunks. `due` is asked after
    every chunk is dispatched (cheap: a counter, a clock, a signal flag); when it says yes,
    `run_members` waits for that chunk, reports it, and calls `save` with the carry *before* the
    next chunk is dispatched (that chunk is given the carry's buffers: donated). `save` may raise
    to stop the run there (e.g. after a SIGINT); the exception propagates out of `run_members`."""

    def due(self, updates_done: int, final: bool) -> bool: ...

    def save(self, state: MembersState) -> None: ...


def run_members(
    compiled: CompiledRun,
    keys: jax.Array,
    hparams: Any,
    on_chunk: Callable[[ChunkReport], None] | None = None,
    *,
    start: MembersState | None = None,
    checkpointing: Checkpointing | None = None,
) -> TrainResult:
    """Runs every chunk of a compiled multi-member run. `on_chunk` is called on the host after each
    chunk with its metrics and health (the next chunk is already dispatched, so the device does
    not wait); an exception it raises stops the run there (e.g. at the first non-finite chunk).
    Returns the final carry and all metrics `[M, num_updates]`.

    `start` continues a run from a saved state (`MembersState`, at a chunk boundary) instead of
    initialising the members: the chunks that follow compute exactly what they would have in the
    uninterrupted run. `checkpointing` (see `Checkpointing`) is offered the state at the chunk
    boundaries it asks for, the final one included.

    On a mesh, the inputs are padded and sharded here, and the final carry comes back as host
    numpy arrays of the `M` real members (gathered from every process)."""
    t0 = time.perf_counter()
    m = len(keys)
    if start is not None and start.updates_done % compiled.chunk_len:
        raise ValueError(f"a run resumes at a chunk boundary: {start.updates_done} updates done "
                         f"is not a multiple of the chunk length {compiled.chunk_len}")
    if start is None:
        carry = jax.block_until_ready(compiled.init(keys, hparams))  # chunk 0 waits anyway
        first = 0
        collected: list[dict[str, Any]] = []
    else:
        carry = jax.device_put(start.carry) if compiled.mesh is None else start.carry
        first = start.updates_done // compiled.chunk_len
        collected = [dict(start.metrics)] if start.updates_done else []
    init_seconds = time.perf_counter() - t0
    if compiled.mesh is not None:
        carry, hparams = put_members(
            pad_members((to_host(carry), hparams), compiled.num_padded), compiled.mesh)
    pending = None

    def report(i: int, metrics: Any, health: Any) -> None:
        host = {k: v[:m] for k, v in jax.device_get(metrics).items()}
        collected.append(host)
        if on_chunk is not None:
            on_chunk(
                ChunkReport(
                    i, compiled.num_chunks, (i + 1) * compiled.chunk_len, host,
                    time.perf_counter() - t0,
                    {k: v[:m] for k, v in jax.device_get(health).items()}, init_seconds,
                )
            )

    def host_carry(carry: Any) -> Any:
        if compiled.mesh is not None:
            return unpad_members(to_host(carry), m)
        return jax.tree.map(np.array, jax.device_get(carry))  # a copy: the buffers are donated

    for i in range(first, compiled.num_chunks):
        carry, metrics, health = compiled.chunk(carry, hparams)
        if pending is not None:
            report(*pending)
        pending = (i, metrics, health)
        done = (i + 1) * compiled.chunk_len
        if checkpointing is not None and checkpointing.due(done, i + 1 == compiled.num_chunks):
            report(*pending)
            pending = None
            checkpointing.save(MembersState(host_carry(carry), done, _joined(collected)))
    if pending is not None:
        report(*pending)
    all_metrics = _joined(collected)
    if compiled.mesh is not None:
        carry = unpad_members(to_host(carry), m)
    return TrainResult(carry, all_metrics)


def _joined(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-chunk metrics `[M, L_i]` joined along the update axis."""
    return {k: np.concatenate([c[k] for c in chunks], axis=1) for k in chunks[0]}
