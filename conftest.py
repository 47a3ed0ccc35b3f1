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


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked `slow` (long learning runs, every game of a backend) run only when asked
    for with `-m slow` (or any -m expression naming it)."""
    import pytest

    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
