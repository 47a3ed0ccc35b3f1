"""SAC's pieces on hand-computed values: the squashed Gaussian's log-density (the tanh
log-determinant correction), the soft target (entropy term, termination vs truncation), the actor
and temperature losses; acting inside the bounds with uniform warm-up actions."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.sac import (
    SACConfig,
    make_policy,
    sac_actor_loss,
    sample_squashed,
    soft_q_target,
    squashed_log_prob,
    temperature_loss,
)
from rl_algos.sac.losses import LOG_STD_MAX, LOG_STD_MIN, bounded_log_std
from rl_core import Agent


def test_squashed_log_prob_is_the_change_of_variables() -> None:
    """log pi(a) with a = tanh(u), u ~ N(m, s^2): log N(u) - log(1 - tanh(u)^2), per dimension,
    summed; compared with the density computed directly (moderate u) and finite for large u."""
    u = np.array([[0.3, -1.2], [2.0, 0.0]])
    m = np.array([[0.1, -1.0], [1.5, 0.2]])
    log_s = np.array([[-0.5, 0.3], [0.0, -1.0]])
    s = np.exp(log_s)
    gauss = -0.5 * ((u - m) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)
    expected = np.sum(gauss - np.log(1 - np.tanh(u) ** 2), axis=-1)
    got = squashed_log_prob(jnp.asarray(u), jnp.asarray(m), jnp.asarray(log_s))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # where 1 - tanh(u)^2 underflows in float32, the stable form stays finite and correct
    big = squashed_log_prob(jnp.array([[30.0]]), jnp.array([[30.0]]), jnp.array([[0.0]]))
    np.testing.assert_allclose(big, [-0.5 * np.log(2 * np.pi) - 2 * (np.log(2) - 30.0)],
                               rtol=1e-5)


def test_sample_squashed_reparameterises() -> None:
    mean, log_std, z = jnp.array([[0.5]]), jnp.array([[-1.0]]), jnp.array([[2.0]])
    a, logp = sample_squashed(mean, log_std, z)
    u = 0.5 + np.exp(-1.0) * 2.0
    np.testing.assert_allclose(a, [[np.tanh(u)]], rtol=1e-6)
    np.testing.assert_allclose(logp, squashed_log_prob(jnp.array([[u]]), mean, log_std),
                               rtol=1e-6)
    assert np.all(np.abs(np.asarray(a)) < 1)


def test_soft_q_target_hand_values() -> None:
    """y = r + gamma (1 - terminated)(min_k Q'_k - alpha log pi): 1 + 0.9 (2 - 0.5 (-1)) = 3.25;
    a terminated transition is just r; a truncated one (not terminated) bootstraps."""
    r = jnp.array([1.0, 1.0])
    next_q = jnp.array([[2.0, 3.0], [2.0, 3.0]])
    logp = jnp.array([-1.0, -1.0])
    y = soft_q_target(r, jnp.array([False, True]), next_q, logp, jnp.float32(0.5),
                      jnp.float32(0.9))
    np.testing.assert_allclose(y, [3.25, 1.0], rtol=1e-6)


def test_actor_and_temperature_losses() -> None:
    q = jnp.array([[1.0, 2.0], [4.0, 3.0]])  # min: 1, 3
    logp = jnp.array([-0.5, 0.5])
    loss, m = sac_actor_loss(q, logp, jnp.float32(0.2))
    np.testing.assert_allclose(loss, np.mean([0.2 * -0.5 - 1.0, 0.2 * 0.5 - 3.0]), rtol=1e-6)
    np.testing.assert_allclose(m["entropy"], 0.0, atol=1e-7)
    # d/d log_alpha of -E[log_alpha (log pi + H*)] = -E[log pi + H*]: entropy below the target
    # (log pi + H* > 0) pushes log_alpha up
    grad = jax.grad(lambda la: temperature_loss(la, logp + 1.0, jnp.float32(0.0))[0])(0.0)
    np.testing.assert_allclose(grad, -1.0, rtol=1e-6)


def test_bounded_log_std_range() -> None:
    out = bounded_log_std(jnp.array([-100.0, 0.0, 100.0]))
    np.testing.assert_allclose(out, [LOG_STD_MIN, (LOG_STD_MIN + LOG_STD_MAX) / 2, LOG_STD_MAX])


def test_policy_acts_inside_the_bounds_and_warms_up_uniformly() -> None:
    env = rl_envs.make("gymnax/Pendulum-v1")  # actions in [-2, 2]
    policy = make_policy(env, SACConfig(hidden_sizes=(16,)))
    leaves, tree = jax.tree.flatten(policy.agent_like)
    keys = jax.random.split(jax.random.PRNGKey(0), len(leaves))
    agent = jax.tree.unflatten(tree, [3.0 * jax.random.normal(k, s.shape) for k, s in
                                      zip(keys, leaves, strict=True)])
    assert isinstance(agent, Agent)
    n = 20_000
    obs = jax.random.normal(jax.random.PRNGKey(1), (n, 3))
    z = policy.noise(jax.random.PRNGKey(2), (n,))
    for det in (True, False):
        a = np.asarray(policy.act(agent, obs, z, det)[0])
        assert a.shape == (n, 1) and np.all(np.abs(a) <= 2.0)
    warm = np.asarray(policy.act(agent, obs, z, False, None, True)[0])[:, 0]
    # uniform on [-2, 2]: quartiles at -1, 0, 1 and variance 16/12
    np.testing.assert_allclose(np.quantile(warm, [0.25, 0.5, 0.75]), [-1, 0, 1], atol=0.05)
    np.testing.assert_allclose(np.var(warm), 16 / 12, rtol=0.03)
