"""Masked policies never choose an illegal move: PPO's (and DPO's, VPG's) actor and PQN's
ε-greedy acting, greedy and exploring, over thousands of random board states and legal-move
masks, with random networks whose unmasked choice is often illegal."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.qvalues import epsilon_greedy
from rl_algos.ppo import PPOConfig
from rl_algos.pqn import PQNConfig, make_policy
from rl_core import Box, Discrete

N, A = 4096, 7


class BoardSpaces:
    """Only the spaces of a connect-four-like game: what a Policy needs."""

    observation_space = Box(0.0, 1.0, (6, 7, 2))
    action_space = Discrete(A)


def _states(seed: int) -> tuple[jax.Array, jax.Array]:
    k_obs, k_mask, k_one = jax.random.split(jax.random.PRNGKey(seed), 3)
    obs = jax.random.bernoulli(k_obs, 0.3, (N, 6, 7, 2)).astype(jnp.float32)
    mask = jax.random.bernoulli(k_mask, 0.4, (N, A))
    # at least one legal move per state, and some states with exactly one
    only = jax.nn.one_hot(jax.random.randint(k_one, (N,), 0, A), A, dtype=jnp.bool_)
    mask = jnp.where(jnp.arange(N)[:, None] % 8 == 0, only, mask | only)
    return obs, mask


def _random_params(like, seed: int, scale: float = 3.0):
    leaves, tree = jax.tree.flatten(like)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(leaves))
    return jax.tree.unflatten(tree, [scale * jax.random.normal(k, s.shape, s.dtype)
                                     for k, s in zip(keys, leaves, strict=True)])


@pytest.mark.parametrize("algo", ["ppo", "pqn"])
def test_policies_never_pick_an_illegal_move(algo: str) -> None:
    env = BoardSpaces()
    if algo == "ppo":
        policy = actor_critic_policy(env, PPOConfig(hidden_sizes=(32,), activation="relu"))
        explore = None
    else:
        policy = make_policy(env, PQNConfig(hidden_size=32, num_layers=1, cnn_channels=0))
        explore = 0.5  # ε while exploring

    @partial(jax.jit, static_argnums=3)
    def act(agent, obs, mask, greedy, key):
        return policy.act(agent, obs, policy.noise(key, (N,)), greedy, mask, explore)[0]

    no_mask_choices = []
    for seed in range(3):
        obs, mask = _states(seed)
        agent = _random_params(policy.agent_like, seed)
        for greedy in (True, False):
            a = np.asarray(act(agent, obs, mask, greedy, jax.random.PRNGKey(10 + seed)))
            assert a.shape == (N,) and a.dtype == np.int32
            legal = np.take_along_axis(np.asarray(mask), a[:, None], axis=1)[:, 0]
            assert legal.all(), f"{algo} greedy={greedy}: {(~legal).sum()} illegal moves"
        unmasked = np.asarray(act(agent, obs, None, True, jax.random.PRNGKey(0)))
        no_mask_choices.append(np.take_along_axis(np.asarray(mask), unmasked[:, None], 1))
    # Without the mask the same networks would often play illegally: the check above can fail.
    assert np.mean(~np.concatenate(no_mask_choices)) > 0.3


def test_epsilon_greedy_explores_only_legal_moves_and_covers_them() -> None:
    obs, mask = _states(7)
    q = jax.random.normal(jax.random.PRNGKey(1), (N, A)) * 10.0
    a = np.asarray(jax.jit(epsilon_greedy)(q, mask, 1.0, jax.random.PRNGKey(2)))
    m = np.asarray(mask)
    assert np.take_along_axis(m, a[:, None], 1).all()
    # fully exploring: every legal move of a state gets played somewhere (uniform, not greedy)
    assert len(np.unique(a)) == A
    greedy = np.asarray(epsilon_greedy(q, mask, 0.0, jax.random.PRNGKey(2)))
    np.testing.assert_array_equal(greedy, np.argmax(np.where(m, np.asarray(q), -np.inf), 1))
