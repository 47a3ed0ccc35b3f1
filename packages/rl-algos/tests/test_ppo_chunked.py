"""PPO driven in compiled chunks (rl_core.compile_members + run_members, what the CLI does) gives
the same agents and metrics as the monolithic make_train program."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_algorithm, make_train
from rl_core import compile_members, run_members

# 4 envs * 16 steps = 64 steps per update; 256 steps = 4 updates.
CONFIG = PPOConfig(
    total_timesteps=4 * 16 * 4, num_envs=4, num_steps=16, num_minibatches=2, num_epochs=2
)
ENV = rl_envs.make("gymnax/CartPole-v1")


def _members(m: int):
    keys = jax.random.split(jax.random.PRNGKey(7), m)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (m,)), hparams_as_arrays(PPOHParams()))
    return keys, hp


@pytest.mark.heavy
def test_chunked_driver_equals_monolithic_train() -> None:
    """Bitwise, with the XLA fusion emitters `rl` compiles with: the older loop emitters that
    the default tier uses to compile faster (conftest.FAST_COMPILE_FLAGS) fuse the chunk and the
    whole run differently, and some values then differ in the last bit. Under those flags the
    comparison runs in a child process without them."""
    flags = os.environ.get("XLA_FLAGS", "").split()
    if not any(f.startswith("--xla_cpu_use_fusion_emitters") for f in flags):
        compare_chunked_with_monolithic()
        return
    env = {**os.environ, "XLA_FLAGS": " ".join(
        f for f in flags if not f.startswith("--xla_cpu_use_fusion_emitters"))}
    if jax.config.jax_compilation_cache_dir:
        env["JAX_COMPILATION_CACHE_DIR"] = str(jax.config.jax_compilation_cache_dir)
    p = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=600,
                       env=env)
    assert p.returncode == 0, p.stderr[-4000:]


def compare_chunked_with_monolithic() -> None:
    keys, hp = _members(2)
    algo = make_algorithm(ENV, CONFIG)
    assert algo.num_updates == 4 and algo.steps_per_update == 64
    compiled = compile_members(algo, keys, hp, chunk_len=2)
    assert compiled.num_chunks == 2
    reports = []
    chunked = run_members(compiled, keys, hp, on_chunk=reports.append)
    mono = jax.jit(jax.vmap(make_train(ENV, CONFIG)))(keys, hp)
    for a, b in zip(jax.tree.leaves(chunked.state), jax.tree.leaves(mono.state), strict=True):
        np.testing.assert_array_equal(a, b)
    assert set(chunked.metrics) == set(mono.metrics)
    for k in mono.metrics:
        assert chunked.metrics[k].shape == (2, 4)
        np.testing.assert_array_equal(chunked.metrics[k], mono.metrics[k], err_msg=k)
    assert [r.updates_done for r in reports] == [2, 4]
    # 2 updates of 4 envs x 16 steps per chunk.
    assert int(chunked.state.train_state.step[0]) == 4


if __name__ == "__main__":
    compare_chunked_with_monolithic()
