"""Shared pytest set-up for every package's tests.

A persistent JAX compilation cache shared by all test workers (pytest-xdist) and all runs: the
suite compiles many small training programs, and on a 2-core CI machine compilation dominates.
Override the location with RL_TEST_JAX_CACHE.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax

_cache = os.environ.get("RL_TEST_JAX_CACHE") or str(
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rl" / "jax-tests"
)
jax.config.update("jax_compilation_cache_dir", _cache)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


# The tiers a plain `pytest` skips: long learning runs and every environment id (`slow`), the
# learning gates (`gate`, tests/gates), short learning checks (`learning`) and end-to-end checks
# too slow for the default tier's budget (`heavy`: several `rl` processes, a second device mesh,
# the largest compiles); CI runs the last three together: `pytest -m "gate or learning or heavy"`.
SKIPPED_BY_DEFAULT = ("slow", "gate", "learning", "heavy")


# XLA flags of the default tier: backend optimisation level 0, and the CPU backend's older loop
# emitters for fusions instead of its MLIR fusion emitters, which compile about twice as slowly
# (tests/test_algorithm_contract.py's PPO, DQN and SAC cases on a cold cache: 68 CPU-s with the
# fusion emitters at level 0, 34 without). `rl_process_env(optimised=True)` strips them again.
FAST_COMPILE_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")

# The tests that simulate several devices in one process (`--xla_force_host_platform_device_count`)
# run them on the machine's 2 cores beside pytest-xdist's other worker: one device's share of a
# program can reach a collective long after the others, and XLA's CPU runtime aborts the process
# when a collective waits over 40 s (its default).
COLLECTIVE_TIMEOUT_FLAG = "--xla_cpu_collective_call_terminate_timeout_seconds=600"


def pytest_configure(config) -> None:
    """The default tier compiles hundreds of small programs that run for milliseconds: most of
    its time is XLA compilation, so that tier compiles with `FAST_COMPILE_FLAGS`. A marker
    expression (`-m slow`, `-m gate`, the learning tiers, whose programs run for minutes) keeps
    full optimisation. Set before JAX starts its backend, and inherited by the `rl` processes
    the tests start; a flag already in XLA_FLAGS is left as it is. Every tier gets
    `COLLECTIVE_TIMEOUT_FLAG`."""
    flags = os.environ.get("XLA_FLAGS", "")
    extra = (COLLECTIVE_TIMEOUT_FLAG,) if config.getoption("markexpr") else (
        COLLECTIVE_TIMEOUT_FLAG, *FAST_COMPILE_FLAGS)
    for flag in extra:
        if flag.split("=")[0] not in flags:
            flags = f"{flags} {flag}".strip()
    os.environ["XLA_FLAGS"] = flags


def pytest_collection_modifyitems(config, items) -> None:
    """Tests of the tiers in `SKIPPED_BY_DEFAULT` are skipped unless a marker expression is
    given: `pytest -m slow`, `-m gate` and `-m learning` run them, `pytest -m "slow or not
    slow"` runs all. With a marker expression the gates, the longest tests, run first (the
    AlphaZero gate, the longest of them, first in its file), so that pytest-xdist's workers
    fill the end of the run with the short ones and finish together."""
    import pytest

    if config.getoption("markexpr"):
        items.sort(key=lambda item: "gate" not in item.keywords)  # stable: file order kept
        return
    for item in items:
        for marker in SKIPPED_BY_DEFAULT:
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"{marker}: run with -m {marker}"))
                break
