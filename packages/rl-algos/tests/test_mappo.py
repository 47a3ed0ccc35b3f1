"""MAPPO: the network's split between a decentralised actor and a centralised critic, the policy
acting alike on the environment's own and on the centralised observations, and the settings it
refuses."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos.common.config import ConfigError
from rl_algos.common.distributions import distribution_for
from rl_algos.common.networks import actor_critic_factory
from rl_algos.common.policy import actor_critic_model
from rl_algos.mappo import MAPPOConfig, make_policy
from rl_algos.mappo.train import centralised
from rl_core import Agent, Discrete, agents_as_batch


def test_the_actor_reads_its_own_part_and_the_critic_the_rest() -> None:
    model = actor_critic_factory(distribution_for(Discrete(5)), 10, (16,), "tanh",
                                 actor_size=4)(jax.random.PRNGKey(0))
    x = jax.random.normal(jax.random.PRNGKey(1), (10,))
    g_actor = jax.grad(lambda v: jnp.sum(model.policy_output(v) ** 2))(x)
    g_critic = jax.grad(model.value)(x)
    assert np.all(np.asarray(g_actor[4:]) == 0.0) and np.any(np.asarray(g_actor[:4]) != 0.0)
    assert np.all(np.asarray(g_critic[:4]) == 0.0) and np.any(np.asarray(g_critic[4:]) != 0.0)
    out, _ = model(x)
    np.testing.assert_array_equal(out, model.policy_output(x[:4]))  # own observation alone


def test_the_policy_acts_alike_on_own_and_centralised_observations() -> None:
    env = rl_envs.make("jaxmarl/MPE_simple_spread_v3")
    config = MAPPOConfig(hidden_sizes=(16,))
    policy = make_policy(env, config)
    model = actor_critic_model(centralised(env), config)(jax.random.PRNGKey(1))
    agent = Agent(eqx.filter(model, eqx.is_array))
    _, raw = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), 4))
    _, full = jax.vmap(centralised(env).reset)(jax.random.split(jax.random.PRNGKey(0), 4))
    raw, full = agents_as_batch(raw), agents_as_batch(full)
    noise = policy.noise(jax.random.PRNGKey(2), (12,))
    for deterministic in (True, False):
        a_raw, e_raw = policy.act(agent, raw.observation, noise, deterministic)
        a_full, e_full = policy.act(agent, full.observation, noise, deterministic)
        np.testing.assert_array_equal(a_raw, a_full)
        np.testing.assert_allclose(e_raw["log_prob"], e_full["log_prob"], rtol=1e-6)
    assert np.all(np.asarray(e_raw["value"]) == 0.0)  # no critic input on the env's own
    assert np.any(np.asarray(e_full["value"]) != 0.0)


@pytest.mark.parametrize("field", ["normalize_observations", "fast_update"])
def test_settings_the_split_cannot_take_are_refused(field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        MAPPOConfig(**{field: True}).validate()
