"""PPO end to end on MultiDiscrete actions with a per-dimension action mask (the factorised
categorical, `MultiCategorical`): no illegal value is ever taken, and the free dimension learns."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_train
from rl_core import Box, MultiDiscrete, TimeStep, check_environment


class MaskedPairEnv:
    """Actions `[a0, a1]` in MultiDiscrete((4, 3)); the mask is bool `[4 + 3]`, the per-dimension
    masks concatenated. Dimension 0: only `t % 4` and `(t + 1) % 4` are legal; an illegal value
    earns -100 and terminates. Dimension 1: every value is legal and `a1 == 0` earns +1 more. A
    legal step earns +1. Episodes are truncated after 8 steps, so a policy that respects the mask
    scores between 8 and 16 (16: always a1 = 0; 8 + 8/3 on average when a1 is uniform)."""

    observation_space = Box(0.0, 1.0, (4,))
    action_space = MultiDiscrete((4, 3))
    limit = 8

    def _ts(self, t, reward, terminated, truncated):
        phase = t % 4
        mask0 = (jnp.arange(4) == phase) | (jnp.arange(4) == (phase + 1) % 4)
        mask = jnp.concatenate([mask0, jnp.ones(3, jnp.bool_)])
        obs = jax.nn.one_hot(phase, 4, dtype=jnp.float32)
        return TimeStep(obs, reward, terminated, truncated, {"action_mask": mask})

    def reset(self, key):
        t = jnp.zeros((), jnp.int32)
        f = jnp.zeros((), jnp.bool_)
        return t, self._ts(t, jnp.zeros((), jnp.float32), f, f)

    def step(self, t, action, key):
        phase = t % 4
        legal = (action[0] == phase) | (action[0] == (phase + 1) % 4)
        t = t + 1
        reward = jnp.where(legal, 1.0 + (action[1] == 0), -100.0).astype(jnp.float32)
        return t, self._ts(t, reward, ~legal, (t >= self.limit) & legal)


def test_masked_pair_env_keeps_the_contract() -> None:
    check_environment(MaskedPairEnv())


def test_ppo_multidiscrete_respects_the_mask_and_learns() -> None:
    # 4 envs * 16 steps = 64 per update, 40 updates.
    config = PPOConfig(total_timesteps=2560, num_envs=4, num_steps=16, num_minibatches=2,
                       num_epochs=4, hidden_sizes=(32,))
    res = jax.jit(make_train(MaskedPairEnv(), config))(
        jax.random.PRNGKey(0), hparams_as_arrays(PPOHParams(lr=3e-3, ent_coef=0.0)))
    count = np.asarray(res.metrics["episode_count"])
    returns = np.asarray(res.metrics["episode_return_sum"]) / count
    # No illegal value ever: every episode lasts exactly 8 steps (2 per env and update) and scores
    # at least 8 (one illegal step would bring a return of at most 7 - 100).
    np.testing.assert_array_equal(count, [8.0] * 40)
    np.testing.assert_array_equal(res.metrics["episode_length_sum"], 8.0 * count)
    assert np.all(returns >= 8.0)
    # The free dimension learns a1 = 0: uniform play scores 10.67 on average.
    assert returns[:2].mean() < 12.5, returns[:2]
    assert returns[-5:].mean() > 15.0, returns[-5:]
