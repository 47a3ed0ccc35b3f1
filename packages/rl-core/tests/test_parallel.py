"""rl_core.parallel in one process (whatever devices it has): padding round-trips, a member mesh
gives the same run as no mesh, a data-parallel wrapper over one device is the plain algorithm,
and the multi-host options are checked before anything starts. The multi-device and multi-process
checks run in subprocesses (tests/test_scale_devices.py, tests/test_scale_hosts.py), because the
device count is fixed when JAX starts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    DATA_AXIS,
    Algorithm,
    DataAxis,
    compile_members,
    data_mesh,
    data_parallel,
    distributed_config,
    member_mesh,
    pad_members,
    padded_size,
    run_members,
    unpad_members,
)


def _toy_algorithm(data_axis: DataAxis | None = None) -> Algorithm:
    """A tiny stochastic 'learner': the carry is (theta, key); each update draws noise from the
    key and moves theta towards it at rate hp. With a data axis the step is averaged over it."""

    def init(key, hp):
        k_theta, k_run = jax.random.split(key)
        if data_axis is not None:
            k_run = jax.random.fold_in(k_run, jax.lax.axis_index(data_axis.name))
        return jax.random.normal(k_theta, (3,)), k_run

    def update(carry, hp):
        theta, key = carry
        key, k = jax.random.split(key)
        step = hp * (jax.random.normal(k, (3,)) - theta)
        if data_axis is not None:
            step = jax.lax.pmean(step, data_axis.name)
        return (theta + step, key), {"norm": jnp.linalg.norm(theta)}

    return Algorithm(init, update, num_updates=6, steps_per_update=5)


def test_pad_and_unpad_round_trip() -> None:
    mesh = member_mesh()
    d = len(jax.devices())
    assert padded_size(1, mesh) == d and padded_size(d + 1, mesh) == 2 * d
    tree = {"a": np.arange(5.0), "b": np.arange(10).reshape(5, 2)}
    padded = pad_members(tree, 8)
    assert padded["a"].tolist() == [0, 1, 2, 3, 4, 4, 4, 4]
    assert padded["b"][-1].tolist() == [8, 9]
    back = unpad_members(padded, 5)
    np.testing.assert_array_equal(back["b"], tree["b"])


def test_member_mesh_run_equals_plain_run() -> None:
    algo = _toy_algorithm()
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    hp = jnp.linspace(0.1, 0.5, 5, dtype=jnp.float32)
    plain = run_members(compile_members(algo, keys, hp, chunk_len=2), keys, hp)
    mesh = member_mesh()
    compiled = compile_members(algo, keys, hp, chunk_len=2, mesh=mesh)
    assert compiled.num_members == 5 and compiled.num_padded == padded_size(5, mesh)
    sharded = run_members(compiled, keys, hp)
    assert sharded.metrics["norm"].shape == (5, 6)
    np.testing.assert_allclose(sharded.metrics["norm"], plain.metrics["norm"], rtol=1e-6)
    for a, b in zip(jax.tree.leaves(sharded.state), jax.tree.leaves(plain.state), strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_data_parallel_wrapper_layout_on_one_device() -> None:
    """The wrapped algorithm's carry gains a `[D]` device axis after the member axis, counts the
    steps of every device, and starts from the same theta as the plain algorithm (the initial
    parameters come from the shared key; only the run key is folded with the device index)."""
    mesh = data_mesh(1)
    dp = data_parallel(_toy_algorithm(DataAxis(DATA_AXIS, 1)), mesh)
    assert dp.steps_per_update == 5
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    hp = jnp.full((2,), 0.3, jnp.float32)
    out = run_members(compile_members(dp, keys, hp, chunk_len=3), keys, hp)
    theta, _ = out.state
    assert theta.shape == (2, 1, 3)  # members, devices, parameters
    assert out.metrics["norm"].shape == (2, 6)
    ref = run_members(compile_members(_toy_algorithm(), keys, hp, chunk_len=3), keys, hp)
    # The first update's metric is the norm of the initial theta: the same in both.
    np.testing.assert_allclose(out.metrics["norm"][:, 0], ref.metrics["norm"][:, 0], rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs,env,hint",
    [
        (dict(coordinator="localhost:1234"), {}, "missing: process count, process id"),
        (dict(coordinator="localhost:1234", num_processes=2, process_id=2), {}, "[0, 1]"),
        (dict(coordinator="localhost", num_processes=2, process_id=0), {}, "host:port"),
        (dict(num_processes=0, process_id=0, coordinator="a:1"), {}, ">= 1"),
        ({}, {"RL_NUM_PROCESSES": "two"}, "RL_NUM_PROCESSES"),
    ],
)
def test_distributed_config_refuses_incomplete_settings(kwargs, env, hint) -> None:
    with pytest.raises(ValueError, match=None) as exc:
        distributed_config(**kwargs, environ=env)
    assert hint in str(exc.value)


def test_distributed_config_reads_scheduler_variables() -> None:
    env = {"RL_COORDINATOR_ADDRESS": "10.0.0.1:7777", "RL_NUM_PROCESSES": "4",
           "RL_PROCESS_ID": "3"}
    cfg = distributed_config(environ=env)
    assert cfg.wanted and (cfg.coordinator, cfg.num_processes, cfg.process_id) == (
        "10.0.0.1:7777", 4, 3)
    assert distributed_config(process_id=1, environ=env).process_id == 1  # options win
    assert not distributed_config(environ={}).wanted
    assert distributed_config(auto=True, environ={}).wanted
