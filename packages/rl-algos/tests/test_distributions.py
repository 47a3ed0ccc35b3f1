"""Action distributions: masking, closed-form log-probabilities and entropies."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common import (
    MASKED_LOGIT,
    Categorical,
    DiagGaussian,
    MultiCategorical,
    distribution_for,
)
from rl_core import Box, Discrete, MultiDiscrete

KEYS = jax.random.split(jax.random.PRNGKey(0), 4096)


def test_categorical_unmasked_log_prob_is_log_softmax() -> None:
    dist = Categorical(2)
    logits = dist.params(jnp.array([0.0, jnp.log(3.0)]))
    # softmax([0, ln 3]) = [1/4, 3/4]
    np.testing.assert_allclose(jnp.exp(logits), [0.25, 0.75], rtol=1e-6)
    np.testing.assert_allclose(dist.log_prob(logits, jnp.int32(1)), np.log(0.75), rtol=1e-6)
    assert int(dist.mode(logits)) == 1


def test_categorical_masked_log_prob_and_entropy() -> None:
    dist = Categorical(4)
    out = jnp.array([1.0, 2.0, 3.0, 4.0])
    mask = jnp.array([True, False, True, False])
    logits = dist.params(out, mask)
    # Legal actions 0 and 2: p = [e^1, e^3] / (e^1 + e^3) = [1/(1+e^2), e^2/(1+e^2)]
    #                          = [0.1192029, 0.8807971]
    np.testing.assert_allclose(jnp.exp(logits), [0.1192029, 0.0, 0.8807971, 0.0], atol=1e-6)
    np.testing.assert_allclose(dist.log_prob(logits, jnp.int32(0)), -2.1269280, rtol=1e-5)
    # Illegal actions: probability exactly 0, log-probability about MASKED_LOGIT = -1e9.
    for a in (1, 3):
        lp = float(dist.log_prob(logits, jnp.int32(a)))
        assert lp <= 0.5 * MASKED_LOGIT
        assert float(jnp.exp(lp)) == 0.0
    # Entropy of the two legal actions: -(p ln p + q ln q) = 0.3653339, finite (no 0 * -inf).
    ent = dist.entropy(logits)
    assert np.isfinite(float(ent))
    np.testing.assert_allclose(ent, 0.3653339, rtol=1e-5)
    # The mode is the best legal action, not the best action (3).
    assert int(dist.mode(logits)) == 2


def test_categorical_masked_gradients_are_finite() -> None:
    dist = Categorical(3)
    mask = jnp.array([True, False, True])

    def f(out):
        logits = dist.params(out, mask)
        return dist.log_prob(logits, jnp.int32(0)) + dist.entropy(logits)

    g = jax.grad(f)(jnp.array([0.5, 9.0, -1.0]))
    assert np.all(np.isfinite(np.asarray(g)))
    # The illegal action's output does not matter: analytically the masked log-probabilities
    # are out_i - logsumexp(legal outputs), so the gradient is 0 up to float32 rounding of the
    # first (unmasked) log_softmax, which cancels only to ~1e-8.
    assert abs(float(g[1])) < 1e-6
    # Shifting every output by a constant changes nothing, so the gradients sum to 0; the legal
    # outputs do matter.
    assert abs(float(jnp.sum(g))) < 1e-6 and abs(float(g[0])) > 1e-2


def test_categorical_sampling_never_illegal() -> None:
    dist = Categorical(4)
    # The network strongly prefers the illegal actions 1 and 3.
    logits = dist.params(jnp.array([0.0, 10.0, 0.0, 10.0]), jnp.array([True, False, True, False]))
    samples = np.asarray(jax.vmap(lambda k: dist.sample(k, logits))(KEYS))
    assert set(samples.tolist()) == {0, 2}
    assert samples.dtype == np.int32
    # A batch of states with different masks (what the networks feed in).
    masks = jnp.array([[True, False, False, False], [False, False, False, True]])
    blogits = dist.params(jnp.zeros((2, 4)), masks)
    bs = np.asarray(jax.vmap(lambda k: dist.sample(k, blogits))(KEYS[:512]))
    assert np.all(bs[:, 0] == 0) and np.all(bs[:, 1] == 3)


def test_diag_gaussian_log_prob_and_entropy() -> None:
    dist = DiagGaussian(2)
    p = dist.params((jnp.array([0.5, -1.0]), jnp.array([np.log(2.0), 0.0], jnp.float32)))
    action = jnp.array([1.5, -1.0])
    # z = [(1.5 - 0.5) / 2, 0] = [0.5, 0];
    # log N = sum(-z^2/2 - log sigma - ln(2 pi)/2) = -0.125 - ln 2 - ln(2 pi) = -2.6560242
    np.testing.assert_allclose(dist.log_prob(p, action), -2.6560242, rtol=1e-6)
    # H = sum(log sigma + (1 + ln 2 pi)/2) = ln 2 + 1 + ln(2 pi) = 3.5310242
    np.testing.assert_allclose(dist.entropy(p), 3.5310242, rtol=1e-6)
    np.testing.assert_array_equal(dist.mode(p), [0.5, -1.0])


def test_diag_gaussian_broadcasts_log_std_and_samples() -> None:
    dist = DiagGaussian(2)
    mean = jnp.array([[0.0, 3.0]] * 3)  # a batch of 3 states
    mean_p, log_std_p = dist.params((mean, jnp.array([0.0, np.log(0.5)], jnp.float32)))
    assert log_std_p.shape == (3, 2)
    p = (mean[0], log_std_p[0])
    samples = np.asarray(jax.vmap(lambda k: dist.sample(k, p))(KEYS))
    # 4096 samples: the standard error of the mean is sigma / 64 (< 0.016), so 0.05 is > 3 s.e.
    np.testing.assert_allclose(samples.mean(0), [0.0, 3.0], atol=0.05)
    np.testing.assert_allclose(samples.std(0), [1.0, 0.5], atol=0.05)


def test_multicategorical_log_prob_is_sum_of_factors() -> None:
    dist = MultiCategorical((2, 3))
    assert dist.output_size == 5
    logits = dist.params(jnp.array([0.0, 0.0, 0.0, np.log(2.0), np.log(5.0)], jnp.float32))
    # factor 0: [1/2, 1/2]; factor 1: [1, 2, 5] / 8
    # log p([1, 2]) = ln(1/2) + ln(5/8) = -0.6931472 - 0.4700036 = -1.1631508
    np.testing.assert_allclose(dist.log_prob(logits, jnp.array([1, 2])), -1.1631508, rtol=1e-6)
    # H = ln 2 + H([1/8, 2/8, 5/8]) = 0.6931472 + 0.9002560 = 1.5934032
    np.testing.assert_allclose(dist.entropy(logits), 1.5934032, rtol=1e-6)
    np.testing.assert_array_equal(dist.mode(logits), [0, 2])
    samples = np.asarray(jax.vmap(lambda k: dist.sample(k, logits))(KEYS))
    assert samples.shape == (4096, 2) and samples.dtype == np.int32
    assert set(samples[:, 0].tolist()) == {0, 1} and set(samples[:, 1].tolist()) == {0, 1, 2}


def test_multicategorical_per_dimension_mask() -> None:
    dist = MultiCategorical((2, 3))
    out = jnp.array([0.0, 0.0, 0.0, np.log(2.0), np.log(5.0)], jnp.float32)
    # The per-dimension masks concatenated: factor 0 all legal, factor 1 forbids value 2.
    mask = jnp.array([True, True, True, True, False])
    logits = dist.params(out, mask)
    # factor 1 renormalised over [1, 2]: p = [1/3, 2/3, 0]
    np.testing.assert_allclose(np.exp(logits[2:]), [1 / 3, 2 / 3, 0.0], atol=1e-7)
    # log p([0, 1]) = ln(1/2) + ln(2/3) = -0.6931472 - 0.4054651 = -1.0986123
    np.testing.assert_allclose(dist.log_prob(logits, jnp.array([0, 1])), -1.0986123, rtol=1e-6)
    # H = ln 2 + H([1/3, 2/3]) = 0.6931472 + 0.6365142 = 1.3296614
    np.testing.assert_allclose(dist.entropy(logits), 1.3296614, rtol=1e-6)
    samples = np.asarray(jax.vmap(lambda k: dist.sample(k, logits))(KEYS))
    assert set(samples[:, 1].tolist()) == {0, 1}
    grads = jax.grad(lambda o: dist.entropy(dist.params(o, mask)))(out)
    assert np.all(np.isfinite(np.asarray(grads)))


def test_distribution_for() -> None:
    assert isinstance(distribution_for(Discrete(3)), Categorical)
    assert distribution_for(Discrete(3)).output_size == 3
    assert isinstance(distribution_for(MultiDiscrete((2, 2))), MultiCategorical)
    assert isinstance(distribution_for(Box(-1.0, 1.0, (4,))), DiagGaussian)
    with pytest.raises(ValueError, match="must be a vector"):
        distribution_for(Box(-1.0, 1.0, (2, 2)))
    with pytest.raises(ValueError, match="no distribution"):
        distribution_for("text")


def test_sampling_from_noise_matches_jax_random() -> None:
    """`sample_with(p, noise(key, ...))` is how rollouts sample (noise of every step drawn at
    once); for one key it is exactly `jax.random.categorical` / a reparameterised normal."""
    key = jax.random.PRNGKey(3)
    logits = jax.nn.log_softmax(jax.random.normal(jax.random.PRNGKey(4), (64, 5)))
    cat = distribution_for(Discrete(5))
    np.testing.assert_array_equal(cat.sample(key, logits),
                                  jax.random.categorical(key, logits, axis=-1))
    mean, log_std = jnp.ones((64, 2)), jnp.full((64, 2), -1.0)
    gauss = distribution_for(Box(-1.0, 1.0, (2,), jnp.float32))
    np.testing.assert_allclose(gauss.sample(key, (mean, log_std)),
                               mean + jnp.exp(log_std) * jax.random.normal(key, (64, 2)))
    multi = distribution_for(MultiDiscrete((2, 3)))
    draws = jax.vmap(lambda k: multi.sample(k, jnp.log(jnp.array([.9, .1, .2, .3, .5]))))(
        jax.random.split(key, 4000))
    np.testing.assert_allclose(np.mean(np.asarray(draws[:, 0]) == 0), 0.9, atol=0.03)
    np.testing.assert_allclose(np.bincount(np.asarray(draws[:, 1]), minlength=3) / 4000,
                               [0.2, 0.3, 0.5], atol=0.03)
