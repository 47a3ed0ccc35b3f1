"""PPO is one pure program: vmapping it over seeds gives the same agents as running each seed
alone."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_train

# 4 envs * 16 steps = 64 steps per update; 256 steps = 4 updates.
CONFIG = PPOConfig(
    total_timesteps=4 * 16 * 4, num_envs=4, num_steps=16, num_minibatches=2, num_epochs=2
)
ENV = rl_envs.make("gymnax/CartPole-v1")


def _members(m: int):
    keys = jax.random.split(jax.random.PRNGKey(7), m)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (m,)), hparams_as_arrays(PPOHParams()))
    return keys, hp


def test_vmapped_seeds_equal_single_seed_runs() -> None:
    train = make_train(ENV, CONFIG)
    keys, hp = _members(3)
    batched = jax.jit(jax.vmap(train))(keys, hp)
    single = jax.jit(train)
    hp1 = hparams_as_arrays(PPOHParams())
    params_b = jax.tree.leaves(batched.state.train_state.params)
    assert batched.metrics["loss/total"].shape == (3, 4)
    for i in range(3):
        alone = single(keys[i], hp1)
        params_1 = jax.tree.leaves(alone.state.train_state.params)
        assert len(params_1) == len(params_b)
        for a, b in zip(params_1, params_b, strict=True):
            # Not bitwise: under vmap, XLA batches the members' matmuls and reductions and may
            # associate their float32 sums differently from the unbatched program, so results
            # differ in the last bits (observed: at most 3e-8 after 4 updates).
            np.testing.assert_allclose(a, b[i], rtol=0, atol=1e-6)
        for k in ("episode_count", "episode_return_sum", "episode_length_sum"):
            # The same actions were sampled: the same episodes, exactly.
            np.testing.assert_array_equal(alone.metrics[k], batched.metrics[k][i], err_msg=k)
        for k, v in alone.metrics.items():
            # Losses up to the same last-bit differences (loss/value is about 20).
            np.testing.assert_allclose(v, batched.metrics[k][i], rtol=1e-5, atol=1e-6, err_msg=k)
    # Different seeds really train different agents.
    assert not np.array_equal(params_b[0][0], params_b[0][1])
