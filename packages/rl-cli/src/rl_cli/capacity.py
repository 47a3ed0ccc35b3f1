"""Capacity before compute: does a run of M members fit in the device's memory?

The estimate is linear in M, `fixed + M * per_member`, and is measured, not guessed: the chunk
program (`rl_core.chunk_program`, what `compile_members` compiles) is lowered and compiled for
`SMALL` and `2 * SMALL` members and XLA's `memory_analysis()` gives each one's arguments, outputs
(less what is aliased: the donated carry) and temporaries; the difference is the cost of
`SMALL` members. To that the member axis adds what the host keeps: the init program's output (the
carry, `jax.eval_shape` of `init`) and every update's metrics (float32, collected per chunk and
concatenated at the end: twice). The budget is what the device can still take: on CPU the
available RAM (`MemAvailable` in /proc/meminfo, or the cgroup's limit if lower), on an
accelerator `bytes_limit - bytes_in_use` from `device.memory_stats()`.

Small runs (`CHECK_FROM` members or fewer) skip the measurement, which costs two compilations;
a larger request that cannot fit is refused with the numbers and the largest member count that
fits, before anything is compiled at full size or written.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, NamedTuple

from rl_cli.errors import UserError

CHECK_FROM = 64  # members; below this a run is not measured
SMALL = 2  # the measured programs have SMALL and 2 * SMALL members
HEADROOM = 0.8  # refuse above this fraction of the available memory
# A member count this large is refused without measuring (64-bit seeds, names, metrics...).
HARD_LIMIT = 100_000_000


class Estimate(NamedTuple):
    fixed_bytes: float
    per_member_bytes: float
    available_bytes: float
    where: str  # "RAM" or the device kind
    seconds: float  # how long the measurement took

    def need(self, members: int) -> float:
        return self.fixed_bytes + members * self.per_member_bytes

    def max_members(self) -> int:
        room = HEADROOM * self.available_bytes - self.fixed_bytes
        return max(0, int(room // max(self.per_member_bytes, 1.0)))


def available_memory(device: Any) -> tuple[float, str]:
    """Bytes the device can still allocate, and what they are (RAM for the CPU)."""
    if device.platform != "cpu":
        stats = device.memory_stats() or {}
        if "bytes_limit" in stats:
            return float(stats["bytes_limit"] - stats.get("bytes_in_use", 0)), device.device_kind
    avail = math.inf
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = float(line.split()[1]) * 1024
    except OSError:
        pass
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            cap = Path(limit).read_text().strip()
            if cap != "max":
                avail = min(avail, float(cap) - float(Path(usage).read_text()))
        except (OSError, ValueError):
            continue
    return avail, "RAM"


def _program_bytes(compiled: Any) -> float:
    m = compiled.memory_analysis()
    if m is None:
        return math.nan
    return float(m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
                 + m.temp_size_in_bytes)


def _tree_bytes(tree: Any) -> float:
    import jax
    import numpy as np

    return float(sum(np.prod(x.shape) * np.dtype(x.dtype).itemsize
                     for x in jax.tree.leaves(tree)))


def estimate(algo: Any, hparams_one: Any, chunk_len: int) -> Estimate:
    """Measures `fixed + M * per_member` for `algo` with the traced hyperparameters of one
    member (`hparams_as_arrays`, no member axis)."""
    import jax
    import jax.numpy as jnp

    from rl_core import chunk_program

    t0 = time.perf_counter()
    program = chunk_program(algo, chunk_len)

    def measure(m: int) -> float:
        keys = jax.ShapeDtypeStruct((m, 2), jnp.uint32)
        hp = jax.tree.map(lambda x: jax.ShapeDtypeStruct((m, *jnp.shape(x)), jnp.result_type(x)),
                          hparams_one)
        carry = jax.eval_shape(jax.vmap(algo.init), keys, hp)
        compiled = jax.jit(program, donate_argnums=0).lower(carry, hp).compile()
        return _program_bytes(compiled)

    small, double = measure(SMALL), measure(2 * SMALL)
    carry_one = jax.eval_shape(algo.init, jax.ShapeDtypeStruct((2,), jnp.uint32), hparams_one)
    _, metrics_one = jax.eval_shape(algo.update, carry_one, hparams_one)
    host = 2 * algo.num_updates * _tree_bytes(metrics_one)
    per_member = (double - small) / SMALL + _tree_bytes(carry_one) + host
    fixed = max(0.0, small - SMALL * (double - small) / SMALL)
    available, where = available_memory(jax.devices()[0])
    return Estimate(fixed, per_member, available, where, time.perf_counter() - t0)


def _gib(x: float) -> str:
    return f"{x / 2**30:.2f} GiB" if x >= 2**28 else f"{x / 2**20:.1f} MiB"


def check_member_count(members: int, what: str = "--num-seeds") -> None:
    """Refuses a member count beyond `HARD_LIMIT` before anything is built for it."""
    if members > HARD_LIMIT:
        raise UserError(f"{what}: {members:,} members is beyond what one run can hold (at most "
                        f"{HARD_LIMIT:,}); split the work into several runs")


def check_capacity(algo: Any, hparams_one: Any, chunk_len: int, members: int,
                   what: str = "--num-seeds") -> Estimate | None:
    """Refuses (UserError) a member count (per device) whose estimate exceeds `HEADROOM` of the
    available memory; returns the estimate (None for small runs, which are not measured)."""
    check_member_count(members, what)
    if members <= CHECK_FROM:
        return None
    est = estimate(algo, hparams_one, chunk_len)
    if not math.isfinite(est.per_member_bytes):
        return None
    if est.need(members) > HEADROOM * est.available_bytes:
        raise UserError(
            f"{what}: {members:,} members need about {_gib(est.need(members))} "
            f"({_gib(est.per_member_bytes)} per member + {_gib(est.fixed_bytes)}), more than "
            f"{HEADROOM:.0%} of the {_gib(est.available_bytes)} of {est.where} available; at "
            f"most {est.max_members():,} members fit (or use fewer environments per member, "
            f"or several devices/runs)")
    return est
