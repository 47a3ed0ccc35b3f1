"""PQN: hand-computed Q(λ) targets (termination, truncation, λ at its limits), masked maxima,
masked acting, image observations, and the proof that it learns CartPole-v1."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos import get
from rl_algos.common import hparams_as_arrays
from rl_algos.common.qvalues import epsilon_at, masked_max, q_lambda_returns
from rl_algos.pqn import PQNConfig, PQNHParams, make_train
from rl_algos.pqn.train import next_q_values
from rl_core import Box, Discrete, TimeStep, final_return

R = jnp.array([1.0, 2.0, 3.0])
QMAX = jnp.array([10.0, 20.0, 30.0])  # max_a Q(s'_t, a) of each step's true next state
F = jnp.array([False, False, False])


def returns(term, trunc, gamma=0.9, lam=0.5):
    return np.asarray(q_lambda_returns(R, QMAX, jnp.array(term), jnp.array(trunc), gamma, lam))


def test_q_lambda_without_episode_ends() -> None:
    # G2 = 3 + 0.9*30 = 30; G1 = 2 + 0.9*(0.5*30 + 0.5*20) = 24.5;
    # G0 = 1 + 0.9*(0.5*24.5 + 0.5*10) = 16.525
    np.testing.assert_allclose(returns(F, F), [16.525, 24.5, 30.0], rtol=1e-6)
    # lambda = 0: one-step targets r + 0.9 max Q(s') = [10, 20, 30]
    np.testing.assert_allclose(returns(F, F, lam=0.0), [10.0, 20.0, 30.0], rtol=1e-6)
    # lambda = 1: discounted returns bootstrapped at the end: G2 = 30, G1 = 2 + 27 = 29,
    # G0 = 1 + 0.9*29 = 27.1
    np.testing.assert_allclose(returns(F, F, lam=1.0), [27.1, 29.0, 30.0], rtol=1e-6)


def test_q_lambda_termination_does_not_bootstrap() -> None:
    # terminated at t=1: G1 = 2; G0 = 1 + 0.9*(0.5*2 + 0.5*10) = 6.4; G2 = 30 (next episode)
    np.testing.assert_allclose(returns([False, True, False], F), [6.4, 2.0, 30.0], rtol=1e-6)


def test_q_lambda_truncation_bootstraps_from_the_final_state() -> None:
    # truncated at t=1: G1 = 2 + 0.9*20 = 20 (not G2, the next episode's);
    # G0 = 1 + 0.9*(0.5*20 + 0.5*10) = 14.5
    np.testing.assert_allclose(returns(F, [False, True, False]), [14.5, 20.0, 30.0], rtol=1e-6)
    # truncated at t=0 and terminated at t=2: G2 = 3; G1 = 2 + 0.9*(0.5*3 + 0.5*20) = 12.35;
    # G0 = 1 + 0.9*10 = 10
    np.testing.assert_allclose(returns([False, False, True], [True, False, False]),
                               [10.0, 12.35, 3.0], rtol=1e-6)


def test_masked_max_and_epsilon_schedule() -> None:
    q = jnp.array([[5.0, 1.0, 3.0], [5.0, 1.0, 3.0]])
    mask = jnp.array([[False, True, True], [True, True, True]])
    np.testing.assert_allclose(masked_max(q, mask), [3.0, 5.0])
    np.testing.assert_allclose(masked_max(q, None), [5.0, 5.0])
    hp = PQNHParams(eps_start=1.0, eps_finish=0.1, eps_decay=0.5)
    # 100 updates: decays over the first 50: at 25 -> 0.55, from 50 on -> 0.1
    got = [float(epsilon_at(jnp.int32(u), 100, hp)) for u in (0, 25, 50, 99)]
    np.testing.assert_allclose(got, [1.0, 0.55, 0.1, 0.1], rtol=1e-6)


class MaskedChainEnv:
    """Four actions, two legal at each step (`t % 4` and `(t+1) % 4`); a legal action earns +1,
    an illegal one -100 and ends the episode; truncated after 8 steps."""

    observation_space = Box(0.0, 1.0, (4,))
    action_space = Discrete(4)

    def _ts(self, t, reward, terminated, truncated):
        phase = t % 4
        mask = (jnp.arange(4) == phase) | (jnp.arange(4) == (phase + 1) % 4)
        return TimeStep(jax.nn.one_hot(phase, 4, dtype=jnp.float32), reward, terminated,
                        truncated, {"action_mask": mask})

    def reset(self, key):
        t, f = jnp.zeros((), jnp.int32), jnp.zeros((), jnp.bool_)
        return t, self._ts(t, jnp.zeros((), jnp.float32), f, f)

    def step(self, t, action, key):
        legal = (action == t % 4) | (action == (t + 1) % 4)
        t = t + 1
        return t, self._ts(t, jnp.where(legal, 1.0, -100.0).astype(jnp.float32), ~legal,
                           (t >= 8) & legal)


class _Rollout(NamedTuple):
    next_observation: jax.Array
    extras: dict
    truncated: jax.Array


def test_next_q_values_reuse_the_acted_values_except_after_a_truncation() -> None:
    T, N, D, A = 5, 3, 4, 2
    k_states, k_finals, k_params = jax.random.split(jax.random.PRNGKey(0), 3)
    states = jax.random.normal(k_states, (T + 1, N, D))  # s_0 .. s_T, as the rollout met them
    finals = jax.random.normal(k_finals, (T, N, D))  # an ended episode's final state
    params = jax.random.normal(k_params, (D, A))

    def q_values(p, obs):
        return obs @ p

    terminated = jnp.zeros((T, N), bool).at[1, 0].set(True)

    def rollout(truncated):
        done = (terminated | truncated)[..., None]
        return _Rollout(jnp.where(done, finals, states[1:]),
                        {"q": jax.vmap(partial(q_values, params))(states[:-1])}, truncated)

    fn = jax.jit(partial(next_q_values, q_values), static_argnames="reuse_acted")
    at_the_end = jnp.zeros((T, N), bool).at[T - 1, 1].set(True)
    before_it = at_the_end.at[1, 2].set(True)
    for truncated in (jnp.zeros((T, N), bool), at_the_end, before_it):
        traj = rollout(truncated)
        every = jax.vmap(partial(q_values, params))(traj.next_observation)
        np.testing.assert_allclose(fn(params, traj, reuse_acted=False), every, rtol=1e-6)
        got = fn(params, traj, reuse_acted=True)
        # Everywhere but at the terminated step (not bootstrapped), the true next state's.
        keep = ~terminated[..., None]
        np.testing.assert_allclose(jnp.where(keep, got, 0), jnp.where(keep, every, 0), rtol=1e-5)
        if truncated[:-1].any():  # a truncated final state is valued: the whole pass
            np.testing.assert_array_equal(got, every)
        else:  # the terminated step got the next episode's first state's values
            np.testing.assert_allclose(got[1, 0], q_values(params, states[2, 0]), rtol=1e-5)
        np.testing.assert_allclose(
            q_lambda_returns(jnp.ones((T, N)), got.max(-1), terminated, truncated, 0.9, 0.5),
            q_lambda_returns(jnp.ones((T, N)), every.max(-1), terminated, truncated, 0.9, 0.5),
            rtol=1e-5)
    # Under vmap (seeds), a seed without truncation and one with: each as alone.
    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), rollout(at_the_end), rollout(before_it))
    batched = jax.vmap(lambda t: next_q_values(q_values, params, t, True))(both)
    np.testing.assert_allclose(batched[0], fn(params, rollout(at_the_end), reuse_acted=True),
                               rtol=1e-6)
    np.testing.assert_allclose(batched[1], fn(params, rollout(before_it), reuse_acted=True),
                               rtol=1e-6)
    # The pass is a branch the vmapped program takes only when some seed needs it (a `cond` on
    # `any_member`), not a select that computes it for every seed at every update.
    jaxpr = str(jax.make_jaxpr(jax.vmap(lambda t: next_q_values(q_values, params, t, True)))(both))
    assert " cond[" in jaxpr and "select_n" in jaxpr


def test_pqn_never_takes_an_illegal_action_even_exploring() -> None:
    config = PQNConfig(total_timesteps=256, num_envs=4, num_steps=16, num_minibatches=2,
                       num_epochs=1, hidden_size=16)
    res = jax.jit(make_train(MaskedChainEnv(), config))(
        jax.random.PRNGKey(0), hparams_as_arrays(PQNHParams(eps_start=1.0, eps_finish=1.0)))
    count = np.asarray(res.metrics["episode_count"])
    np.testing.assert_array_equal(count, [8.0] * 4)  # every episode lasts exactly 8 steps
    np.testing.assert_array_equal(res.metrics["episode_return_sum"], 8.0 * count)


def test_pqn_image_observations_use_the_cnn() -> None:
    env = rl_envs.make("gymnax/Breakout-MinAtar")
    config = PQNConfig(total_timesteps=128, num_envs=4, num_steps=16, num_minibatches=2,
                       num_epochs=1, hidden_size=32)
    res = jax.jit(make_train(env, config))(jax.random.PRNGKey(0), hparams_as_arrays(PQNHParams()))
    assert res.state.train_state.params.conv is not None
    for k, v in res.metrics.items():
        assert np.all(np.isfinite(np.asarray(v))), k
    assert "pqn" in get("pqn").name and "minatar" in get("pqn").presets


# `slow`, not `learning`: CI's learning gate pqn-cartpole (tests/gates) asserts more, on 8 seeds.
@pytest.mark.slow
def test_pqn_learns_cartpole() -> None:
    """Two seeds on a shortened budget must pass a return far above a random policy's (~22).
    The 8-seed, 5e5-step figures are in docs/algorithms.md."""
    env = rl_envs.make("gymnax/CartPole-v1")
    static, hparams, _ = get("pqn").presets["classic_control"]
    config = PQNConfig(**{**static, "total_timesteps": 200_000})
    train = make_train(env, config)
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    preset = PQNHParams(**hparams)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (2,)), hparams_as_arrays(preset))
    m = jax.jit(jax.vmap(train))(keys, hp).metrics
    final = np.asarray(final_return(m["episode_return_sum"], m["episode_count"]))
    assert np.all(final >= 150.0), f"final returns {final}"
