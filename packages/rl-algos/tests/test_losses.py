"""PPO's losses on hand-computed values (clip_eps 0.2, vf_coef 0.5, ent_coef 0.01)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.ppo import PPOHParams, clipped_surrogate, ppo_loss, value_loss

HP = PPOHParams(clip_eps=0.2, vf_coef=0.5, ent_coef=0.01)

# Ratios inside and outside [0.8, 1.2] with positive and negative advantages.
RATIO = jnp.array([1.1, 1.5, 0.5, 1.5, 0.5, 0.9], jnp.float32)
ADV = jnp.array([2.0, 2.0, 2.0, -2.0, -2.0, -1.0], jnp.float32)
# min(r A, clip(r, 0.8, 1.2) A):
#   r 1.1, A  2: min( 2.2,  1.1*2 =  2.2) =  2.2   inside the range
#   r 1.5, A  2: min( 3.0,  1.2*2 =  2.4) =  2.4   clipped (no gain from moving further)
#   r 0.5, A  2: min( 1.0,  0.8*2 =  1.6) =  1.0   pessimistic: the unclipped term
#   r 1.5, A -2: min(-3.0,  1.2*-2 = -2.4) = -3.0  pessimistic: the unclipped term
#   r 0.5, A -2: min(-1.0,  0.8*-2 = -1.6) = -1.6  clipped
#   r 0.9, A -1: min(-0.9, -0.9) = -0.9            inside the range
SURROGATE = [2.2, 2.4, 1.0, -3.0, -1.6, -0.9]

VALUE = jnp.array([1.0, 2.0, 0.0, 1.0, 2.0, 0.0], jnp.float32)
OLD_VALUE = jnp.array([0.5, 1.0, 0.0, 0.5, 1.0, 0.0], jnp.float32)
TARGET = jnp.array([2.0, 0.0, 0.1, 2.0, 0.0, 0.1], jnp.float32)
# Unclipped squared errors: (1-2)^2 = 1, (2-0)^2 = 4, (0-0.1)^2 = 0.01 (each twice)
#   -> 0.5 * mean = 0.5 * 5.01 / 3 = 0.835
# Clipped values: 0.5 + clip(0.5, +-0.2) = 0.7; 1.0 + clip(1.0) = 1.2; 0 + 0 = 0
#   errors (0.7-2)^2 = 1.69, (1.2-0)^2 = 1.44, 0.01; max with unclipped: 1.69, 4, 0.01
#   -> 0.5 * 5.7 / 3 = 0.95
V_LOSS_UNCLIPPED, V_LOSS_CLIPPED = 0.835, 0.95
ENTROPY = jnp.array([1.0, 1.2, 0.8, 1.0, 1.2, 0.8], jnp.float32)  # mean 1.0


def test_clipped_surrogate() -> None:
    np.testing.assert_allclose(clipped_surrogate(RATIO, ADV, HP), SURROGATE, rtol=1e-6)


def test_value_loss_with_and_without_clipping() -> None:
    np.testing.assert_allclose(
        value_loss(VALUE, OLD_VALUE, TARGET, HP, clip=False), V_LOSS_UNCLIPPED, rtol=1e-6
    )
    np.testing.assert_allclose(
        value_loss(VALUE, OLD_VALUE, TARGET, HP, clip=True), V_LOSS_CLIPPED, rtol=1e-6
    )


@pytest.mark.parametrize("clip_value_loss", [True, False])
def test_ppo_loss_total_and_metrics(clip_value_loss: bool) -> None:
    old_log_prob = jnp.array([-0.3, -1.0, -2.0, 0.0, -0.5, -1.5], jnp.float32)
    log_prob = old_log_prob + jnp.log(RATIO)
    total, m = ppo_loss(
        log_prob,
        old_log_prob,
        ADV,
        ENTROPY,
        VALUE,
        OLD_VALUE,
        TARGET,
        HP,
        clip_value_loss=clip_value_loss,
        normalize_advantages=False,
    )
    # pg = -mean(SURROGATE) = -(2.2 + 2.4 + 1.0 - 3.0 - 1.6 - 0.9) / 6 = -0.1 / 6
    pg = -0.1 / 6
    v = V_LOSS_CLIPPED if clip_value_loss else V_LOSS_UNCLIPPED
    np.testing.assert_allclose(m["loss/policy"], pg, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(m["loss/value"], v, rtol=1e-6)
    np.testing.assert_allclose(m["loss/entropy"], 1.0, rtol=1e-6)
    # total = pg + 0.5 * v - 0.01 * 1.0:
    #   clipped:   -0.0166667 + 0.475  - 0.01 = 0.4483333
    #   unclipped: -0.0166667 + 0.4175 - 0.01 = 0.3908333
    expected = 0.4483333 if clip_value_loss else 0.3908333
    np.testing.assert_allclose(total, expected, rtol=1e-5)
    np.testing.assert_allclose(m["loss/total"], total)
    # |r - 1| > 0.2 for r = 1.5, 0.5, 1.5, 0.5: 4 of 6
    np.testing.assert_allclose(m["loss/clip_fraction"], 4 / 6, rtol=1e-6)
    # mean((r - 1) - log r): 1.1 -> 0.0046898, 1.5 -> 0.0945349 (x2), 0.5 -> 0.1931472 (x2),
    # 0.9 -> 0.0053605; sum 0.5854145 / 6 = 0.0975691
    np.testing.assert_allclose(m["loss/approx_kl"], 0.0975691, rtol=1e-4)


def test_ppo_loss_normalizes_advantages_over_the_minibatch() -> None:
    ratio = jnp.array([1.5, 1.5], jnp.float32)
    adv = jnp.array([1.0, 3.0], jnp.float32)
    zeros = jnp.zeros(2, jnp.float32)
    args = (jnp.log(ratio), zeros, adv, zeros, zeros, zeros, zeros, HP)
    _, m = ppo_loss(*args, normalize_advantages=True)
    # adv [1, 3]: mean 2, std 1 -> [-1, 1]; surrogates min(-1.5, -1.2) = -1.5 and
    # min(1.5, 1.2) = 1.2; pg = -(-1.5 + 1.2) / 2 = 0.15
    np.testing.assert_allclose(m["loss/policy"], 0.15, rtol=1e-5)
    _, m = ppo_loss(*args, normalize_advantages=False)
    # raw adv: min(1.5, 1.2) = 1.2 and min(4.5, 3.6) = 3.6; pg = -(1.2 + 3.6) / 2 = -2.4
    np.testing.assert_allclose(m["loss/policy"], -2.4, rtol=1e-6)


def test_ppo_loss_takes_another_objective() -> None:
    ratio = jnp.array([2.0, 0.5], jnp.float32)
    adv = jnp.array([1.0, 4.0], jnp.float32)
    zeros = jnp.zeros(2, jnp.float32)
    _, m = ppo_loss(
        jnp.log(ratio),
        zeros,
        adv,
        zeros,
        zeros,
        zeros,
        zeros,
        HP,
        normalize_advantages=False,
        objective=lambda r, a, hp, progress: r * a,
    )
    # unclipped r A = [2, 2] -> pg = -2
    np.testing.assert_allclose(m["loss/policy"], -2.0, rtol=1e-6)
