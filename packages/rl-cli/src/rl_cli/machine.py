"""What a run was computed on, recorded in the config.json of every `rl run`, `rl sweep` and
`rl evolve`: the processor model, the jax version and the devices.

Why it is recorded: a run is bitwise reproducible from its command (same seeds, same device
arrangement) only on the same processor model and jax version. XLA compiles the program for the
processor it runs on (vector widths, its own matrix kernels), every sum's rounding follows, and
over thousands of updates two processors' runs of one command drift apart (docs/algorithms.md
shows PPO on Pendulum and AlphaZero on tic-tac-toe on two processors). Splitting the members
over more devices (`--xla_force_host_platform_device_count`) changes the arithmetic's shapes and
so the rounding too. With the record, a rerun that differs is told apart from a bug.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax


def processor() -> str:
    """The model of the processor that computes: an accelerator's kind (e.g. "NVIDIA H200"), or
    on CPU the host's model name as Linux reports it (e.g. "AMD EPYC"; elsewhere Python's
    `platform.processor()`, else the architecture)."""
    kind = jax.devices()[0].device_kind
    if jax.default_backend() != "cpu":
        return kind
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or kind


def machine_record() -> dict[str, Any]:
    """config.json's record of the machine: `processor`, `jax_version`, `devices` (every device
    the process sees) and `process_count`."""
    return {"processor": processor(), "jax_version": jax.__version__,
            "devices": [str(d) for d in jax.devices()], "process_count": jax.process_count()}


def machine_line(record: dict[str, Any]) -> str:
    """One line naming the machine of a record (`machine_record`'s keys; older records without
    `processor` name only what they have): e.g. "AMD EPYC, 1 device, jax 0.10.2"."""
    n = len(record.get("devices", []))
    parts = [record.get("processor", "processor not recorded"),
             *([f"{n} device{'s' if n != 1 else ''}"] if n else []),
             *([f"jax {record['jax_version']}"] if "jax_version" in record else [])]
    return ", ".join(parts)


MACHINE_KEYS = ("processor", "jax_version", "devices", "process_count")


def machine_change(record: dict[str, Any]) -> str:
    """'' when this process computes on the processor and jax version that `record` (a run's
    config.json) names, or it names no processor (written before processors were recorded);
    else one line for `rl resume` saying that the continuation's rounding is not the original's."""
    if "processor" not in record:
        return ""
    now = machine_record()
    if all(record.get(k) == now[k] for k in ("processor", "jax_version")):
        return ""
    return (f"started on {machine_line(record)}, resumed on {machine_line(now)}: the "
            "continuation's rounding differs, so it is not bitwise what the original machine "
            "would have computed")
