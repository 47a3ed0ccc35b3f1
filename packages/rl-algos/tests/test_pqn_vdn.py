"""PQN-VDN: the team's Q(λ) targets by hand (summed rewards and next values, an agent that is out
adding nothing, the team terminated only when every agent is) and the loss on the summed
Q-values."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from rl_algos.pqn_vdn import PQNVDNHParams, team_targets

HP = PQNVDNHParams(gamma=0.5, q_lambda=0.5, reward_scale=1.0)
REWARD = jnp.array([[[1.0, 2.0]], [[3.0, 4.0]]])  # [T=2, N=1, A=2]
NEXT_MAX = jnp.array([[[10.0, 20.0]], [[30.0, 40.0]]])


def test_an_agent_out_adds_nothing_and_the_team_bootstraps_on_the_others() -> None:
    """t=1: agent 0 terminates, agent 1's time runs out (the episode is over, not terminated):
    G_1 = 7 + 0.5 * 40 = 27; t=0: B_0 = 0.5 * 27 + 0.5 * 30 = 28.5, G_0 = 3 + 0.5 * 28.5."""
    terminated = jnp.array([[[False, False]], [[True, False]]])
    over = jnp.array([[False], [True]])
    np.testing.assert_allclose(team_targets(REWARD, NEXT_MAX, terminated, over, HP),
                               [[17.25], [27.0]])


def test_the_team_terminates_when_every_agent_does() -> None:
    """t=1: both terminated: G_1 = 7, no bootstrap; G_0 = 3 + 0.5 * (0.5 * 7 + 0.5 * 30)."""
    terminated = jnp.array([[[False, False]], [[True, True]]])
    over = jnp.array([[False], [True]])
    np.testing.assert_allclose(team_targets(REWARD, NEXT_MAX, terminated, over, HP),
                               [[12.25], [7.0]])


def test_rewards_are_scaled_before_summing_into_the_target() -> None:
    terminated = jnp.ones((2, 1, 2), bool)
    over = jnp.ones((2, 1), bool)
    hp = PQNVDNHParams(gamma=0.5, q_lambda=0.5, reward_scale=0.1)
    np.testing.assert_allclose(team_targets(REWARD, NEXT_MAX, terminated, over, hp),
                               [[0.3], [0.7]], rtol=1e-6)
