"""Spreading training over devices and hosts (jax only).

Two ways to use many devices:

* **Member sharding.** A multi-member run (seeds x grid points x population) is a vmapped program
  whose leading axis is the member axis `[M]`. `member_mesh()` builds a one-axis `Mesh` over the
  devices and `compile_members(..., mesh=mesh)` (in `rl_core.members`) shards that axis across it.
  When `M` does not divide the device count, the members are padded (by repeating the last one) to
  the next multiple and the padding is dropped from every output, so callers never see it.
* **Data parallelism.** One agent's environments are split across the devices of a `data` axis and
  the gradients are averaged with `lax.pmean` inside `shard_map`, so a single agent can use a whole
  machine. The algorithm takes a `DataAxis` (its per-device share of the work and the axis name
  of its reductions); `data_parallel(local_algo, mesh)` turns that per-device `Algorithm` into an
  ordinary one whose carry has a leading `[D]` device axis.

Several hosts: `initialize_distributed(...)` starts JAX's multi-process runtime; afterwards
`jax.devices()` lists every host's devices, `member_mesh()` spans them all, and inputs become
global arrays through `put_members` (each process passes the same host values and keeps its own
shards). `is_main_process()` says which process writes logs and files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from rl_core.types import Algorithm

MEMBER_AXIS = "members"
DATA_AXIS = "data"


class DataAxis(NamedTuple):
    """What a data-parallel algorithm needs to know: the mesh axis its reductions run over and how
    many devices share one agent's environments."""

    name: str
    size: int


# --------------------------------------------------------------------------- meshes and padding


def _devices(num_devices: int | None, local: bool) -> list[Any]:
    devices = list(jax.local_devices() if local else jax.devices())
    if num_devices is None:
        return devices
    if not 1 <= num_devices <= len(devices):
        raise ValueError(
            f"asked for {num_devices} devices but {len(devices)} are available "
            f"({devices[0].platform})")
    return devices[:num_devices]


def member_mesh(num_devices: int | None = None, devices: Sequence[Any] | None = None) -> Mesh:
    """A one-axis mesh ('members') over the first `num_devices` of *all* processes' devices
    (every device by default)."""
    devs = list(devices) if devices is not None else _devices(num_devices, local=False)
    return Mesh(np.array(devs), (MEMBER_AXIS,))


def data_mesh(num_devices: int | None = None) -> Mesh:
    """A one-axis mesh ('data') over this host's first `num_devices` devices, for one agent whose
    environments are split across them."""
    return Mesh(np.array(_devices(num_devices, local=True)), (DATA_AXIS,))


def mesh_size(mesh: Mesh) -> int:
    return int(np.prod(list(mesh.shape.values())))


def padded_size(num_members: int, mesh: Mesh) -> int:
    """The smallest multiple of the mesh's device count that holds `num_members`."""
    d = mesh_size(mesh)
    return -(-num_members // d) * d


def pad_members(tree: Any, size: int) -> Any:
    """Pads the leading `[M]` axis of every leaf to `[size]` by repeating the last member (real
    values: padding never produces NaNs or different shapes). Host numpy in, host numpy out."""

    def pad(x: Any) -> Any:
        x = np.asarray(x)
        if x.shape[0] == size:
            return x
        reps = np.repeat(x[-1:], size - x.shape[0], axis=0)
        return np.concatenate([x, reps], axis=0)

    return jax.tree.map(pad, tree)


def unpad_members(tree: Any, num_members: int) -> Any:
    """Drops padding members: leading axis `[Mp] -> [M]` on every leaf."""
    return jax.tree.map(lambda x: x[:num_members], tree)


def member_sharding(mesh: Mesh) -> NamedSharding:
    """Leading axis split over every axis of the mesh, the rest of each array unsplit."""
    return NamedSharding(mesh, P(tuple(mesh.axis_names)))


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, P())


def put_members(tree: Any, mesh: Mesh) -> Any:
    """Host arrays with a leading member axis -> global arrays sharded along it. Works with several
    processes: each passes the same values and only its own devices' shards are transferred."""
    sharding = member_sharding(mesh)

    def put(x: Any) -> jax.Array:
        x = np.asarray(x)
        return jax.make_array_from_callback(x.shape, sharding, lambda idx: x[idx])

    return jax.tree.map(put, tree)


def to_host(tree: Any) -> Any:
    """Device arrays -> numpy on this host, gathering other processes' shards when an array is not
    fully addressable here (every process must call this together in that case)."""

    def get(x: Any) -> Any:
        if isinstance(x, jax.Array) and not x.is_fully_addressable and not x.is_fully_replicated:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(jax.device_get(x))

    return jax.tree.map(get, tree)


# --------------------------------------------------------------------------- data parallelism


def _expand(tree: Any) -> Any:
    return jax.tree.map(lambda x: jnp.expand_dims(x, 0), tree)


def _squeeze(tree: Any) -> Any:
    return jax.tree.map(lambda x: jnp.squeeze(x, 0), tree)


def data_parallel(local: Any, mesh: Mesh, axis: str = DATA_AXIS) -> Any:
    """Turns a per-device `Algorithm` (built with `DataAxis(axis, D)`: it acts on its 1/D share
    of the environments and `pmean`s its gradients over `axis`) into an ordinary `Algorithm`.

    The returned algorithm's carry has a leading `[D]` device axis sharded over `axis` (the
    parameters in it are identical on every device: same initial key, same averaged gradients);
    its metrics are the per-device metrics of device 0, which the local update has already
    reduced over the axis, and its agent is device 0's. `steps_per_update` counts all devices'
    environment steps."""
    d = mesh.shape[axis]

    def init(key: jax.Array, hp: Any) -> Any:
        # A named vmap instead of shard_map: `axis_index` works the same, and the init (with its
        # LAPACK calls, which can deadlock when several CPU devices run them at once) stays on
        # one device; the first update moves the carry onto the mesh.
        return jax.vmap(local.init, in_axes=(None, None), axis_size=d, axis_name=axis)(key, hp)

    def update(carry: Any, hp: Any) -> tuple[Any, dict[str, jax.Array]]:
        def body(c: Any, h: Any) -> tuple[Any, Any]:
            c, m = local.update(_squeeze(c), h)
            return _expand(c), _expand(m)

        f = jax.shard_map(body, mesh=mesh, in_specs=(P(axis), P()),
                          out_specs=(P(axis), P(axis)), check_vma=False)
        carry, metrics = f(carry, hp)
        return carry, jax.tree.map(lambda x: x[0], metrics)

    def agent(carry: Any) -> Any:  # identical on every device: device 0's copy
        return local.agent(jax.tree.map(lambda x: x[0], carry))

    return Algorithm(init, update, local.num_updates, local.steps_per_update * d,
                     agent if local.agent is not None else None, local.policy)


# --------------------------------------------------------------------------- several hosts

# Environment variables read when no explicit option is given (a scheduler's launch script can set
# them); JAX's own auto-detection (SLURM, Open MPI, Kubernetes, ...) is used with `auto=True`.
ENV_COORDINATOR = "RL_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "RL_NUM_PROCESSES"
ENV_PROCESS_ID = "RL_PROCESS_ID"


class DistributedConfig(NamedTuple):
    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    auto: bool = False  # let jax.distributed detect the cluster from the scheduler's environment

    @property
    def wanted(self) -> bool:
        return self.auto or any(
            v is not None for v in (self.coordinator, self.num_processes, self.process_id))


def distributed_config(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    auto: bool = False,
    environ: dict[str, str] | None = None,
) -> DistributedConfig:
    """Explicit values win over `RL_COORDINATOR_ADDRESS` / `RL_NUM_PROCESSES` / `RL_PROCESS_ID`.
    Raises ValueError (with what to fix) for an incomplete or inconsistent set."""
    env = os.environ if environ is None else environ

    def from_env(value: Any, name: str, conv: Any) -> Any:
        if value is not None or name not in env:
            return value
        try:
            return conv(env[name])
        except ValueError:
            raise ValueError(f"{name}={env[name]!r} is not a valid value") from None

    cfg = DistributedConfig(
        from_env(coordinator, ENV_COORDINATOR, str),
        from_env(num_processes, ENV_NUM_PROCESSES, int),
        from_env(process_id, ENV_PROCESS_ID, int),
        auto,
    )
    if cfg.auto or not cfg.wanted:
        return cfg
    missing = [n for n, v in (("coordinator address", cfg.coordinator),
                              ("process count", cfg.num_processes),
                              ("process id", cfg.process_id)) if v is None]
    if missing:
        raise ValueError(f"multi-host start-up needs the coordinator address, the process count "
                         f"and this process's id; missing: {', '.join(missing)}")
    assert cfg.num_processes is not None and cfg.process_id is not None
    if cfg.num_processes < 1:
        raise ValueError(f"the process count must be >= 1, got {cfg.num_processes}")
    if not 0 <= cfg.process_id < cfg.num_processes:
        raise ValueError(f"the process id must be in [0, {cfg.num_processes - 1}], "
                         f"got {cfg.process_id}")
    if ":" not in (cfg.coordinator or ""):
        raise ValueError(f"the coordinator address must be host:port, got {cfg.coordinator!r}")
    return cfg


def initialize_distributed(cfg: DistributedConfig) -> bool:
    """Starts `jax.distributed` when `cfg` asks for it (before any other JAX call). Returns
    whether it was started. On CPU the cross-process collectives use gloo (JAX's default)."""
    if not cfg.wanted:
        return False
    if cfg.auto:
        jax.distributed.initialize()
    else:
        jax.distributed.initialize(cfg.coordinator, cfg.num_processes, cfg.process_id)
    return True


def is_main_process() -> bool:
    """Only process 0 writes logs, checkpoints and tables."""
    return jax.process_index() == 0
