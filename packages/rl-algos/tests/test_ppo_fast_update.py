"""`PPOConfig.fast_update`: each piece computes what the default update computes (up to float
rounding), on every kind of action and with an image torso, and PPO with it tracks the default
over several updates."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.common.distributions import (
    Categorical,
    DiagGaussian,
    MultiCategorical,
    log_prob_entropy_feature_major,
)
from rl_algos.common.networks import (
    actor_critic_factory,
    actor_critic_feature_major,
    actor_weights_t,
    policy_batch_major,
    value_batch_major,
)
from rl_algos.ppo import PPOConfig, PPOHParams, make_train

KEY = jax.random.PRNGKey(7)
B, D_OBS = 96, 6
DISTS = [Categorical(5), MultiCategorical((3, 4)), DiagGaussian(2)]


def _model(dist, image=None, d_obs=D_OBS):
    return actor_critic_factory(dist, d_obs, (32, 16), "tanh", image, 4)(KEY)


def _actions(dist, key):
    if isinstance(dist, DiagGaussian):
        return jax.random.normal(key, (B, dist.dim))
    if isinstance(dist, MultiCategorical):
        return jnp.stack([jax.random.randint(k, (B,), 0, n) for k, n in
                          zip(jax.random.split(key, len(dist.nvec)), dist.nvec, strict=True)], 1)
    return jax.random.randint(key, (B,), 0, dist.n)


def _reference(model, dist, obs, action, mask):
    out, value = jax.vmap(model)(obs)
    p = dist.params(out, mask)
    return dist.log_prob(p, action), dist.entropy(p), value


def _fast(model, dist, obs, action, mask):
    out_t, value = actor_critic_feature_major(model, obs)
    return (*log_prob_entropy_feature_major(dist, out_t, model.log_std, action, mask), value)


@pytest.mark.parametrize("dist", DISTS, ids=lambda d: type(d).__name__)
def test_feature_major_terms_and_gradients_equal_the_default(dist) -> None:
    model = _model(dist)
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(1), 3)
    obs, action = jax.random.normal(k1, (B, D_OBS)), _actions(dist, k2)
    mask = None
    if isinstance(dist, Categorical):  # some actions illegal, never the one taken
        mask = jax.random.bernoulli(k3, 0.6, (B, dist.n)).at[jnp.arange(B), action].set(True)
    weights = jax.random.normal(k3, (3, B))
    params, static = eqx.partition(model, eqx.is_array)

    def loss(fn, p):
        return sum(jnp.sum(w * t) for w, t in
                   zip(weights, fn(eqx.combine(p, static), dist, obs, action, mask), strict=True))

    for a, b in zip(_reference(model, dist, obs, action, mask),
                    _fast(model, dist, obs, action, mask), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    g_ref, g_fast = (jax.grad(lambda p, f=f: loss(f, p))(params) for f in (_reference, _fast))
    leaves = jax.tree.leaves(g_ref)
    assert len(leaves) == len(jax.tree.leaves(g_fast)) >= 8
    for a, b in zip(leaves, jax.tree.leaves(g_fast), strict=True):
        assert float(jnp.max(jnp.abs(a))) > 0
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_every_path_with_an_image_torso() -> None:
    """A shared convolution before the MLPs: outputs and gradients of the feature-major SGD
    path, and the rollout's actor and batched critic, equal the model's."""
    dist = Categorical(4)
    model = _model(dist, image=(2, (3, 3, 2)), d_obs=2 + 18 + 3)
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(2), 3)
    obs, action = jax.random.normal(k1, (B, 23)), _actions(dist, k2)
    weights = jax.random.normal(k3, (3, B))
    params, static = eqx.partition(model, eqx.is_array)

    def loss(fn, p):
        return sum(jnp.sum(w * t) for w, t in
                   zip(weights, fn(eqx.combine(p, static), dist, obs, action, None), strict=True))

    g_ref, g_fast = (jax.grad(lambda p, f=f: loss(f, p))(params) for f in (_reference, _fast))
    assert float(jnp.max(jnp.abs(g_ref.torso.kernel))) > 0
    for a, b in zip(jax.tree.leaves(g_ref), jax.tree.leaves(g_fast), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    out, value = jax.vmap(model)(obs)
    np.testing.assert_allclose(policy_batch_major(model, obs, actor_weights_t(model)), out,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value_batch_major(model, obs), value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dist", DISTS, ids=lambda d: type(d).__name__)
def test_rollout_actor_and_batched_critic_equal_the_model(dist) -> None:
    model = _model(dist)
    obs = jax.random.normal(jax.random.PRNGKey(3), (B, D_OBS))
    fast = jax.tree.leaves(policy_batch_major(model, obs, actor_weights_t(model)))
    ref = jax.tree.leaves(jax.vmap(model)(obs)[0])
    for a, b in zip(ref, fast, strict=True):
        np.testing.assert_allclose(jnp.broadcast_to(b, a.shape), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value_batch_major(model, obs), jax.vmap(model.value)(obs),
                               rtol=1e-5, atol=1e-6)


def _train(env_id, config, seed=0):
    env = rl_envs.make(env_id)
    return jax.jit(make_train(env, config))(jax.random.PRNGKey(seed),
                                             hparams_as_arrays(PPOHParams()))


@pytest.mark.parametrize("env_id, extra", [
    ("gymnax/Pendulum-v1", dict(normalize_observations=True, normalize_rewards=True)),
    ("gymnax/CartPole-v1", {}),
])
def test_fast_update_tracks_the_default_over_several_updates(env_id, extra) -> None:
    """Four updates each way from the same key: the same random streams (actions, resets,
    shuffles), so the two differ only in float rounding; the parameters and every metric agree
    closely, and the episode statistics, which rounding rarely flips, agree exactly."""
    config = PPOConfig(total_timesteps=1024, num_envs=4, num_steps=64, num_minibatches=2,
                       num_epochs=2, **extra)
    ref = _train(env_id, config)
    fast = _train(env_id, PPOConfig(**{**config.__dict__, "fast_update": True}))
    for k in ("episode_count", "episode_return_sum", "episode_length_sum"):
        np.testing.assert_allclose(fast.metrics[k], ref.metrics[k], rtol=1e-5, err_msg=k)
    assert set(fast.metrics) == set(ref.metrics)
    for k, v in fast.metrics.items():
        np.testing.assert_allclose(v, ref.metrics[k], rtol=1e-3, atol=1e-4, err_msg=k)
    for a, b in zip(jax.tree.leaves(eqx.filter(fast.state.train_state.params, eqx.is_array)),
                    jax.tree.leaves(eqx.filter(ref.state.train_state.params, eqx.is_array)),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_ppo_rnn_refuses_fast_update() -> None:
    from rl_algos.common.config import ConfigError
    from rl_algos.ppo_rnn import PPORNNConfig

    with pytest.raises(ConfigError, match="leave fast_update off"):
        PPORNNConfig(fast_update=True).validate()
