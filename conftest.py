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


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `slow` (long learning runs, every environment id) or `gate` (the learning
    gates, tests/gates) are skipped unless a marker expression is given: `pytest -m slow` and
    `pytest -m gate` run them, `pytest -m "slow or not slow"` runs all."""
    import pytest

    if config.getoption("markexpr"):
        return
    for item in items:
        for marker in ("slow", "gate"):
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"{marker}: run with -m {marker}"))
                break
