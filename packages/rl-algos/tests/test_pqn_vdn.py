"""PQN-VDN: the team's Q(λ) targets by hand (summed rewards and next values, an agent that is out
adding nothing, the team terminated only when every agent is), the team's Q-value summed over the
agents that act, which agents act in each step of a rollout, and the agents-batched layout
(environment-major) that the update reshapes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rl_algos.pqn_vdn import PQNVDNHParams, acting, team_q, team_targets
from rl_core import AgentsAsBatch

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


def test_a_shared_reward_counts_once_for_the_team() -> None:
    """`team_reward="mean"` (SMAX: every agent handed the team's reward): terminal steps, so the
    targets are the rewards averaged over the agents, then scaled."""
    terminated = jnp.ones((2, 1, 2), bool)
    over = jnp.ones((2, 1), bool)
    hp = PQNVDNHParams(gamma=0.5, q_lambda=0.5, reward_scale=10.0)
    np.testing.assert_allclose(team_targets(REWARD, NEXT_MAX, terminated, over, hp, "mean"),
                               [[15.0], [35.0]], rtol=1e-6)


def test_team_q_sums_the_taken_values_of_the_agents_that_act() -> None:
    q = jnp.arange(2 * 3 * 4, dtype=jnp.float32).reshape(2, 3, 4)  # [B=2, A=3, U=4]
    action = jnp.array([[0, 1, 3], [2, 2, 0]])
    acts = jnp.array([[True, True, True], [True, False, True]])
    # row 0: q[0,0,0] + q[0,1,1] + q[0,2,3] = 0 + 5 + 11; row 1: q[1,0,2] + q[1,2,0] = 14 + 20
    np.testing.assert_array_equal(team_q(q, action, acts), [16.0, 34.0])


def test_an_agent_acts_until_it_is_out_and_again_from_the_next_episode() -> None:
    """Agent 1 terminates at step 0 and sits out step 1; the episode ends at step 1, so both act
    at step 2. Before the rollout agent 0 had terminated in an episode that ended: it acts."""
    terminated = jnp.array([[False, True], [True, True], [False, False]])
    over = jnp.array([[False, False], [True, True], [False, False]])
    got = acting(jnp.array([True, False]), jnp.array([True, True]), terminated, over)
    np.testing.assert_array_equal(got, [[True, True], [True, False], [True, True]])


def test_the_agents_batch_is_environment_major() -> None:
    """What the update's reshape `[N * A] -> [N, A]` assumes: actor i is agent i % A of
    environment i // A."""
    from rl_algos.common.envs import make_vector_env

    class Ids:
        """Two agents; each observes (environment id, agent id)."""

        num_agents, agents = 2, ("a", "b")

        def __init__(self):
            from rl_core import Box, Discrete

            self.observation_space, self.action_space = Box(0.0, 9.0, (2,)), Discrete(2)

        def _ts(self, env_id):
            from rl_core import TimeStep

            obs = jnp.stack([jnp.full(2, env_id), jnp.arange(2.0)], axis=1)
            z = jnp.zeros(2, bool)
            return TimeStep(obs, jnp.zeros(2), z, z, {})

        def reset(self, key):
            env_id = jax.random.randint(key, (), 0, 1000).astype(jnp.float32)
            return env_id, self._ts(env_id)

        def step(self, state, action, key):
            return state, self._ts(state)

    venv = make_vector_env(Ids(), 3, flatten=False)
    assert isinstance(venv, AgentsAsBatch)
    _, ts = venv.reset(jax.random.PRNGKey(0))
    per_env = ts.observation.reshape(3, 2, 2)
    np.testing.assert_array_equal(per_env[:, :, 1], [[0, 1]] * 3)  # agent ids along axis 1
    assert len(set(np.asarray(per_env[:, 0, 0]).tolist())) == 3  # one environment per row
    np.testing.assert_array_equal(per_env[:, 0, 0], per_env[:, 1, 0])
