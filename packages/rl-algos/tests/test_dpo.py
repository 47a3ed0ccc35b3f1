"""DPO's objective on hand-computed values and gradient signs (α = 2, β = 0.6), and DPO as a
registered algorithm that runs through PPO's loop.

f(r, A) = ReLU((r−1)A − α tanh((r−1)A/α)) for A ≥ 0, ReLU(log(r)A − β tanh(log(r)A/β)) for A < 0;
objective (maximised) = r·A − f(r, A)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos import get
from rl_algos.common import hparams_as_arrays
from rl_algos.dpo import DPOConfig, DPOHParams, dpo_drift, dpo_objective, make_train
from rl_algos.ppo import PPOHParams, ppo_loss

HP = DPOHParams()  # alpha 2, beta 0.6

# (r, A) -> drift, objective, d objective / d r, worked out by hand:
#  r 1.0, A  2: (r-1)A = 0: drift 0; obj 2; grad = A = 2 (the drift's slope is 0 at r = 1)
#  r 1.5, A  2: x = 1: drift 1 - 2 tanh(0.5) = 0.0757657; obj 3 - 0.0757657 = 2.9242343;
#               grad = A sech²(x/α) = 2 (1 - tanh²(0.5)) = 1.5728955 (still pushes r up, less)
#  r 3.0, A  2: x = 4: drift 4 - 2 tanh(2) = 2.0719448; obj 6 - 2.0719448 = 3.9280552;
#               grad = 2 (1 - tanh²(2)) = 0.1413016 (almost no incentive to grow r further)
#  r 0.5, A  2: x = -1: -1 + 2 tanh(0.5) < 0, ReLU -> drift 0; obj 1; grad 2
#  r 1.5, A -1: y = -log 1.5 < 0 and y - β tanh(y/β) < 0 -> drift 0; obj -1.5; grad -1
#  r 0.5, A -1: y = log 2 = 0.6931472: drift y - 0.6 tanh(y/0.6) = 0.2014566;
#               obj -0.5 - 0.2014566 = -0.7014566; grad = A - (A/r)(1 - sech²(y/β))
#               = -1 + 2 tanh²(1.1552453) = 0.3431090 > 0: r has fallen too far, push it back up
#  r 0.2, A -3: y = -3 log 0.2 = 4.8283137: drift = y - 0.6 tanh(8.047) = 4.2283139;
#               obj -0.6 - 4.2283139 = -4.8283139; grad = -3 + 15 tanh²(8.047) = 11.99999
RATIO = jnp.array([1.0, 1.5, 3.0, 0.5, 1.5, 0.5, 0.2], jnp.float32)
ADV = jnp.array([2.0, 2.0, 2.0, 2.0, -1.0, -1.0, -3.0], jnp.float32)
DRIFT = [0.0, 0.0757657, 2.0719448, 0.0, 0.0, 0.2014566, 4.2283139]
OBJECTIVE = [2.0, 2.9242343, 3.9280552, 1.0, -1.5, -0.7014566, -4.8283139]
GRAD = [2.0, 1.5728955, 0.1413016, 2.0, -1.0, 0.3431090, 11.99999]


def test_dpo_drift_and_objective_values() -> None:
    np.testing.assert_allclose(dpo_drift(RATIO, ADV, HP), DRIFT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dpo_objective(RATIO, ADV, HP), OBJECTIVE, rtol=1e-5, atol=1e-6)
    assert np.all(np.asarray(dpo_drift(RATIO, ADV, HP)) >= 0.0)


def test_dpo_objective_gradient_values_and_signs() -> None:
    grad = jax.vmap(jax.grad(lambda r, a: dpo_objective(r, a, HP)))(RATIO, ADV)
    np.testing.assert_allclose(grad, GRAD, rtol=1e-4)
    # A > 0: the objective always rewards a larger ratio, but the incentive fades as r grows.
    assert grad[0] > grad[1] > grad[2] > 0
    # A < 0 with r > 1: lower the ratio; with r far below 1: the drift pushes it back up.
    assert grad[4] < 0 and grad[5] > 0 and grad[6] > 0


def test_dpo_objective_takes_traced_alpha_beta() -> None:
    # A larger alpha lets the ratio move further before the drift bites: less drift at (1.5, 2).
    wide = HP._replace(alpha=jnp.float32(10.0))
    assert float(dpo_drift(RATIO, ADV, wide)[1]) < DRIFT[1]
    # x = 1, alpha 10: 1 - 10 tanh(0.1) = 0.0033223
    np.testing.assert_allclose(dpo_drift(RATIO, ADV, wide)[1], 0.0033223, rtol=1e-3)


def test_dpo_loss_through_ppo_loss() -> None:
    zeros = jnp.zeros(RATIO.shape, jnp.float32)
    _, m = ppo_loss(jnp.log(RATIO), zeros, ADV, zeros, zeros, zeros, zeros, HP,
                    normalize_advantages=False, objective=dpo_objective)
    np.testing.assert_allclose(m["loss/policy"], -np.mean(OBJECTIVE), rtol=1e-5)


def test_dpo_registered_and_runs_a_tiny_budget() -> None:
    spec = get("dpo")
    assert spec.config_cls is DPOConfig and set(spec.presets) >= {"classic_control", "minatar",
                                                                   "continuous_control"}
    # DPO's hyperparameters are PPO's plus alpha and beta.
    assert DPOHParams._fields == (*PPOHParams._fields, "alpha", "beta")
    env = rl_envs.make("gymnax/CartPole-v1")
    config = DPOConfig(total_timesteps=256, num_envs=4, num_steps=16, num_minibatches=2,
                       num_epochs=1)
    res = jax.jit(make_train(env, config))(jax.random.PRNGKey(0), hparams_as_arrays(HP))
    assert res.metrics["loss/policy"].shape == (4,)
    for k in ("episode_return_sum", "episode_count", "loss/total"):
        assert np.all(np.isfinite(np.asarray(res.metrics[k]))), k
