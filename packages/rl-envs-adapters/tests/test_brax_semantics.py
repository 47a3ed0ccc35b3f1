"""How brax's episode ends map onto terminated / truncated, compile-once, and a quiet import."""

from __future__ import annotations

import functools
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset

# From PRNGKey(0)'s start, full force one way tips the pole past brax's 0.2 rad limit on step 7
# (asserted below); zero force keeps it within 0.03 rad for far longer. With a time limit of
# exactly 7 steps, one compiled rollout shows both ends on the same step.
FALL_STEP = 7


@functools.cache
def _rollout():
    """A jitted `actions [T, 1] -> TimeSteps [T]` under AutoReset, compiled once for the file."""
    # FALL_STEP is the step on which a full push topples the pole under spring's 0.02 s step
    env = AutoReset(rl_envs.make("brax/inverted_pendulum", backend="spring",
                                 episode_length=FALL_STEP))

    @jax.jit
    def run(actions):
        key = jax.random.PRNGKey(0)
        state, _ = env.reset(key)
        return jax.lax.scan(lambda s, a: env.step(s, a, key), state, actions)[1]

    return run


def test_time_limit_is_truncation_not_termination() -> None:
    tss = _rollout()(jnp.zeros((FALL_STEP + 2, 1)))
    np.testing.assert_array_equal(tss.terminated, [False] * (FALL_STEP + 2))
    np.testing.assert_array_equal(tss.truncated, [False] * 6 + [True] + [False] * 2)
    np.testing.assert_array_equal(tss.reward, [1.0] * (FALL_STEP + 2))
    # AutoReset starts a new episode after the limit and keeps the real last observation.
    final, first = np.asarray(tss.info["final_observation"][6]), np.asarray(tss.observation[6])
    assert not np.array_equal(final, first)
    assert abs(final[1]) < 0.03 and np.all(np.abs(first) <= 0.01)  # reset noise: +-0.01
    np.testing.assert_array_equal(tss.info["final_observation"][5], tss.observation[5])


def test_falling_is_termination_even_on_the_limit_step() -> None:
    tss = _rollout()(jnp.ones((FALL_STEP + 2, 1)))
    final_angle = np.asarray(tss.info["final_observation"][:, 1])
    assert abs(final_angle[5]) < 0.2 < abs(final_angle[6])  # the pole falls on step 7 ...
    # ... which is also the time limit: a true terminal is never bootstrapped, so the step is
    # terminated and not truncated.
    np.testing.assert_array_equal(tss.terminated, [False] * 6 + [True] + [False] * 2)
    assert not np.asarray(tss.truncated).any()


def test_second_call_does_not_recompile() -> None:
    env = rl_envs.make("brax/inverted_pendulum")
    # Why the adapter normalises dtypes: brax's own step makes leaves weakly typed that reset
    # made strong, which would change a jitted function's input signature on the second call.
    raw = env._env
    spec0 = jax.eval_shape(raw.reset, jax.random.PRNGKey(0))
    spec1 = jax.eval_shape(raw.step, spec0, jax.ShapeDtypeStruct((1,), jnp.float32))
    weak = [(a.weak_type, b.weak_type) for a, b in zip(jax.tree.leaves(spec0),
                                                       jax.tree.leaves(spec1), strict=True)]
    assert any(w0 != w1 for w0, w1 in weak), "brax no longer changes weak types: simplify"

    traces = 0

    @jax.jit
    def step(state, key):
        nonlocal traces
        traces += 1
        return env.step(state, jnp.full((1,), 0.3), key)

    state, _ = env.reset(jax.random.PRNGKey(0))
    state, _ = step(state, jax.random.PRNGKey(1))
    state, ts = step(state, jax.random.PRNGKey(2))
    assert traces == 1
    assert int(state.time) == 2 and not bool(ts.terminated)


def test_typed_keys_are_accepted() -> None:
    env = rl_envs.make("brax/inverted_pendulum")
    _, ts_raw = env.reset(jax.random.PRNGKey(3))
    _, ts_typed = env.reset(jax.random.wrap_key_data(jax.random.PRNGKey(3)))
    np.testing.assert_array_equal(ts_raw.observation, ts_typed.observation)


def test_import_and_make_print_nothing_to_stdout() -> None:
    # mujoco.mjx prints "Failed to import warp" on import where NVIDIA warp is absent.
    code = "import rl_envs; rl_envs.make('brax/inverted_pendulum')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def test_mujoco_writes_no_log_file_into_the_working_directory(tmp_path) -> None:
    # half_cheetah.xml uses MuJoCo's deprecated `settotalmass`; MuJoCo's default handler would
    # print the warning to stderr and append it to ./MUJOCO_LOG.TXT.
    code = "import rl_envs; rl_envs.make('brax/halfcheetah')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert list(tmp_path.iterdir()) == []
    assert "settotalmass" not in out.stderr and out.stdout == ""


def test_bad_options_teach_the_fix() -> None:
    with pytest.raises(rl_envs.EnvError, match="does not support backend 'warp'") as e:
        rl_envs.make("brax/hopper", backend="warp")
    assert "pick one of generalized, positional, spring, mjx (default: generalized)" in str(
        e.value)
    with pytest.raises(rl_envs.EnvError, match="episode_length must be a positive integer"):
        rl_envs.make("brax/hopper", episode_length=0)
    with pytest.raises(rl_envs.EnvError, match="no parameter 'ctrl_cost'") as e:
        rl_envs.make("brax/hopper", ctrl_cost=0.1)
    assert "ctrl_cost_weight" in str(e.value)


def test_backend_and_kwargs_are_applied() -> None:
    env = rl_envs.make("brax/hopper", backend="generalized", episode_length=7,
                       terminate_when_unhealthy=False)
    assert env.backend == "generalized" and env._env.backend == "generalized"
    assert env.episode_length == 7 and env._env._terminate_when_unhealthy is False
