"""PPO on the other action spaces, on tiny budgets: continuous actions (Pendulum, with both
normalisers) and masked discrete actions (never an illegal one)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_train
from rl_core import Box, Discrete, TimeStep, check_environment


def test_ppo_continuous_pendulum_smoke() -> None:
    env = rl_envs.make("gymnax/Pendulum-v1")
    # 4 envs * 16 steps = 64 per update, 3 updates.
    config = PPOConfig(
        total_timesteps=192,
        num_envs=4,
        num_steps=16,
        num_minibatches=2,
        num_epochs=2,
        normalize_observations=True,
        normalize_rewards=True,
    )
    res = jax.jit(make_train(env, config))(
        jax.random.PRNGKey(0), hparams_as_arrays(PPOHParams(lr=1e-3))
    )
    for k, v in res.metrics.items():
        assert v.shape == (3,), k
        assert np.all(np.isfinite(np.asarray(v))), k
    # A Gaussian policy starts with std 1 per dimension: entropy 0.5 * (1 + ln 2 pi) = 1.4189385
    # for Pendulum's one torque, and moves only a little in 3 small updates.
    np.testing.assert_allclose(res.metrics["loss/entropy"][0], 1.4189385, atol=0.01)
    params = res.state.train_state.params
    assert params.log_std.shape == (1,)
    assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree.leaves(params))
    assert int(res.state.train_state.step) == 3
    # Pendulum never terminates; its 200-step limit is not reached in 48 steps per env.
    assert float(np.sum(res.metrics["episode_count"])) == 0.0


class MaskedChainEnv:
    """Four actions, two of them legal at each step: `t % 4` and `(t + 1) % 4`. The observation
    is the one-hot of `t % 4`. A legal action earns +1; an illegal one -100 and ends the episode.
    Episodes are truncated after 8 steps, so an agent that never acts illegally finishes every
    episode with return exactly 8 and length exactly 8."""

    observation_space = Box(0.0, 1.0, (4,))
    action_space = Discrete(4)
    limit = 8

    def _ts(self, t, reward, terminated, truncated):
        phase = t % 4
        mask = (jnp.arange(4) == phase) | (jnp.arange(4) == (phase + 1) % 4)
        obs = jax.nn.one_hot(phase, 4, dtype=jnp.float32)
        return TimeStep(obs, reward, terminated, truncated, {"action_mask": mask})

    def reset(self, key):
        t = jnp.zeros((), jnp.int32)
        f = jnp.zeros((), jnp.bool_)
        return t, self._ts(t, jnp.zeros((), jnp.float32), f, f)

    def step(self, t, action, key):
        phase = t % 4
        legal = (action == phase) | (action == (phase + 1) % 4)
        t = t + 1
        reward = jnp.where(legal, 1.0, -100.0).astype(jnp.float32)
        terminated = ~legal
        truncated = (t >= self.limit) & legal
        return t, self._ts(t, reward, terminated, truncated)


def test_masked_env_keeps_the_contract() -> None:
    check_environment(MaskedChainEnv())


@pytest.mark.parametrize("fast_update", [False, True])
def test_ppo_never_takes_an_illegal_action(fast_update: bool) -> None:
    # 4 envs * 16 steps = 64 per update, 4 updates: 256 steps = 4 envs * 64 steps.
    config = PPOConfig(
        total_timesteps=256, num_envs=4, num_steps=16, num_minibatches=2, num_epochs=2,
        fast_update=fast_update,
    )
    res = jax.jit(make_train(MaskedChainEnv(), config))(
        jax.random.PRNGKey(1), hparams_as_arrays(PPOHParams())
    )
    count = np.asarray(res.metrics["episode_count"])
    # Without an illegal action every episode lasts 8 steps: 16 steps per env and update finish
    # exactly 2 episodes per env, 8 per update.
    np.testing.assert_array_equal(count, [8.0] * 4)
    # Every finished episode has return 8 (an illegal action would give -100 and end it early).
    np.testing.assert_array_equal(res.metrics["episode_return_sum"], 8.0 * count)
    np.testing.assert_array_equal(res.metrics["episode_length_sum"], 8.0 * count)
    # The masked log-probabilities stay finite in the loss (no -inf * 0).
    for k, v in res.metrics.items():
        assert np.all(np.isfinite(np.asarray(v))), k
    # Two legal actions out of four at every state: the policy's entropy is at most ln 2.
    assert np.all(np.asarray(res.metrics["loss/entropy"]) <= np.log(2.0) + 1e-5)
