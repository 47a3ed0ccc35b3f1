"""How gymnax's episode ends map onto terminated / truncated."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_core import AutoReset


def _run(env, actions):
    @jax.jit
    def run(key):
        state, ts0 = env.reset(key)

        def body(s, a):
            s, ts = env.step(s, a, key)
            return s, ts

        return ts0, jax.lax.scan(body, state, jnp.asarray(actions, jnp.int32))[1]

    return run(jax.random.PRNGKey(0))


def test_cartpole_time_limit_is_truncation() -> None:
    env = rl_envs.make("gymnax/CartPole-v1", max_steps_in_episode=5)
    # Alternating pushes keep the pole up for far longer than 5 steps.
    _, tss = _run(env, [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(tss.terminated, [False] * 5)
    np.testing.assert_array_equal(tss.truncated, [False, False, False, False, True])
    np.testing.assert_array_equal(tss.reward, [1.0] * 5)


def test_cartpole_falling_is_termination() -> None:
    env = rl_envs.make("gymnax/CartPole-v1")
    # Always pushing right makes the pole fall within a few dozen steps (of 500 allowed).
    _, tss = _run(env, [1] * 40)
    term, trunc = np.asarray(tss.terminated), np.asarray(tss.truncated)
    assert term.any(), "the pole never fell"
    first = int(np.argmax(term))
    assert 3 < first < 40
    assert not term[:first].any() and not trunc[: first + 1].any()
    # The terminal step's observation is beyond the 12 degree limit (0.2095 rad) or +-2.4 m.
    obs = np.asarray(tss.observation[first])
    assert abs(obs[2]) > 0.2094 or abs(obs[0]) > 2.4
    # The transition into the terminal state is still rewarded (gymnax/gym CartPole).
    assert float(tss.reward[first]) == 1.0


def test_termination_on_the_time_limit_step_is_not_truncation() -> None:
    # Always pushing right from PRNGKey(0)'s start, the pole falls on step 9 (see above). With a
    # time limit of exactly 9 steps both ends coincide: a true terminal is never bootstrapped,
    # so the step is terminated and not truncated.
    _, free = _run(rl_envs.make("gymnax/CartPole-v1"), [1] * 12)
    assert int(np.argmax(np.asarray(free.terminated))) == 8  # 0-based index of step 9
    _, tss = _run(rl_envs.make("gymnax/CartPole-v1", max_steps_in_episode=9), [1] * 9)
    assert bool(tss.terminated[8]) and not bool(tss.truncated[8])
    assert not np.asarray(tss.terminated[:8]).any() and not np.asarray(tss.truncated).any()


def test_autoreset_around_gymnax_keeps_the_final_observation() -> None:
    env = AutoReset(rl_envs.make("gymnax/CartPole-v1", max_steps_in_episode=3))
    _, tss = _run(env, [0, 1, 0, 1])
    assert bool(tss.truncated[2])
    final, returned = np.asarray(tss.info["final_observation"][2]), np.asarray(tss.observation[2])
    # The reset observation is uniform in [-0.05, 0.05]; the final one moved away from it.
    assert not np.array_equal(final, returned)
    assert np.all(np.abs(returned) <= 0.05)
    np.testing.assert_array_equal(tss.info["final_observation"][1], tss.observation[1])
