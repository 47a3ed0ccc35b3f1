"""The feature-major lever of `tools/bench_ppo_levers.py` computes the same network as PPO's
`ActorCritic`, with the same gradients (up to float rounding): a speed lever, not another model."""

import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_ppo_levers  # noqa: E402


def test_feature_major_actor_critic_matches_the_model_and_its_gradients():
    import rl_envs
    from rl_algos.common.policy import actor_critic_setup

    env = rl_envs.make("gymnax/CartPole-v1")
    config = bench_ppo_levers.bench_ppo.ours_config(500_000)  # the configuration the tool runs
    _, _, make_model, static, _ = actor_critic_setup(env, config, config.num_envs)
    params = eqx.filter(make_model(jax.random.PRNGKey(0)), eqx.is_array)
    obs = jax.random.normal(jax.random.PRNGKey(1), (128, 4))
    w = jax.random.normal(jax.random.PRNGKey(2), (128, 3))

    def reference(p):
        out, value = jax.vmap(eqx.combine(p, static))(obs)
        return jnp.sum(w[:, :2] * out) + jnp.sum(w[:, 2] * value), (out, value)

    def feature_major(p):
        logits_t, value = bench_ppo_levers._fm_actor_critic(eqx.combine(p, static), obs)
        return jnp.sum(w[:, :2].T * logits_t) + jnp.sum(w[:, 2] * value), (logits_t.T, value)

    (_, ref_out), ref_grad = jax.value_and_grad(reference, has_aux=True)(params)
    (_, fm_out), fm_grad = jax.value_and_grad(feature_major, has_aux=True)(params)
    for a, b in zip(jax.tree.leaves(ref_out), jax.tree.leaves(fm_out), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    leaves = jax.tree.leaves(ref_grad)
    assert len(leaves) == 12  # 2 hidden layers and a head, weight and bias, actor and critic
    for a, b in zip(leaves, jax.tree.leaves(fm_grad), strict=True):
        assert float(jnp.max(jnp.abs(a))) > 0
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_feature_major_categorical_terms_match_categorical():
    from rl_algos.common.distributions import Categorical

    logits = 3.0 * jax.random.normal(jax.random.PRNGKey(3), (128, 5))
    action = jax.random.randint(jax.random.PRNGKey(4), (128,), 0, 5)
    dist = Categorical(5)
    p = dist.params(logits, None)
    log_prob, entropy = bench_ppo_levers._fm_categorical(logits.T, action)
    np.testing.assert_allclose(log_prob, dist.log_prob(p, action), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(entropy, dist.entropy(p), rtol=1e-6, atol=1e-6)
