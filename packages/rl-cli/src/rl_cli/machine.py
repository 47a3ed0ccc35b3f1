"""What a run was computed on, recorded in the config.json of every `rl run` and `rl sweep` (the
evolve.json of `rl evolve`): the processor model, the jax version, the devices and the commit of
the source (when it runs from a git checkout). A resumed run keeps the machine it started on
there, and `rl run`/`rl sweep` record each resume's own beside it.

Why it is recorded: a run is bitwise reproducible from its command (same seeds, same device
arrangement) only on the same processor model and jax version. XLA compiles the program for the
processor it runs on (vector widths, its own matrix kernels), every sum's rounding follows, and
over thousands of updates two processors' runs of one command drift apart (docs/algorithms.md
shows PPO on Pendulum and AlphaZero on tic-tac-toe on two processors). Splitting the members
over more devices (`--xla_force_host_platform_device_count`) changes the arithmetic's shapes and
so the rounding too. With the record, a rerun that differs is told apart from a bug.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

import jax

MACHINE_KEYS = ("processor", "jax_version", "devices", "process_count", "commit")


def processor() -> str:
    """The model of the processor that computes: an accelerator's kind (e.g. "NVIDIA H200"), or
    on CPU the host's model name: Linux's /proc/cpuinfo (e.g. "AMD EPYC"), macOS's
    `machdep.cpu.brand_string` (e.g. "Apple M2"), else Python's `platform.processor()`, else the
    architecture."""
    kind = jax.local_devices()[0].device_kind
    if jax.default_backend() != "cpu":
        return kind
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            brand = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], text=True,
                                   capture_output=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            brand = ""
        if brand:
            return brand
    return platform.processor() or platform.machine() or kind


def source_commit() -> str | None:
    """The commit of the framework's source that computes, as `git rev-parse --short HEAD`
    names it, with "+dirty" when tracked files differ from it; None unless this file is tracked
    by a git checkout (an installed package, even one in a virtual environment inside another
    project's checkout). With the machine, what a run's figures are reproduced with."""
    here = Path(__file__).resolve()

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(here.parent), *args], text=True,
                              capture_output=True, timeout=10)

    try:
        if git("ls-files", "--error-unmatch", here.name).returncode:
            return None
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")


def machine_record() -> dict[str, Any]:
    """The record of this machine (`MACHINE_KEYS`): `processor`, `jax_version`, `devices` (every
    device the processes see), `process_count`, and the `commit` of the source that computes
    (`source_commit`)."""
    return dict(zip(MACHINE_KEYS, (processor(), jax.__version__,
                                   [str(d) for d in jax.devices()], jax.process_count(),
                                   source_commit()),
                    strict=True))


def started_machine(old: dict[str, Any]) -> dict[str, Any]:
    """A resumed run's record of the machine it started on, from its earlier record `old`: the
    same keys, None where `old` (written before processors were recorded) has none."""
    return {k: old.get(k) for k in MACHINE_KEYS}


def machine_line(record: dict[str, Any]) -> str:
    """One line naming the machine of a record (`machine_record`'s keys; older records without
    `processor` name only what they have): e.g. "AMD EPYC, 1 device, jax 0.10.2"."""
    n = len(record.get("devices") or [])
    parts = [record.get("processor") or "processor not recorded",
             *([f"{n} device{'s' if n != 1 else ''}"] if n else []),
             *([f"jax {record['jax_version']}"] if record.get("jax_version") else [])]
    return ", ".join(parts)


def computing_on() -> str:
    """A run header's part naming the processor and jax version this process computes with: a
    run's rounding, hence its bitwise result, depends on them. E.g. "on AMD EPYC, jax 0.10.2"."""
    return f"on {processor()}, jax {jax.__version__}"


def machine_change(record: dict[str, Any]) -> str:
    """'' when this process computes on the processor and jax version that `record` (a run's
    config.json) names, or it names no processor (written before processors were recorded);
    else one line for a resume saying that the continuation's rounding is not the original's."""
    if not record.get("processor"):
        return ""
    now = machine_record()
    if all(record.get(k) == now[k] for k in ("processor", "jax_version")):
        return ""
    return (f"started on {machine_line(record)}, resumed on {machine_line(now)}: the "
            "continuation's rounding differs, so it is not bitwise what the original machine "
            "would have computed")
