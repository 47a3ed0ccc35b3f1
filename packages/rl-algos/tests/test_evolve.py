"""Meta-networks, LPO's drift, the value-loss hook, fitness and the ES step: hand-computed values
and the constraints that must hold for *any* meta-parameters."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_algos.common.config import ConfigError, hparams_as_arrays
from rl_algos.common.meta import MetaMLP, anchored, init_meta_mlp, meta_mlp
from rl_algos.evolve import (
    combine_fitness,
    initial_state,
    learned_value_loss,
    make_evaluate,
    make_strategy,
    run_generation,
)
from rl_algos.lpo import (
    LPOHParams,
    init_drift,
    is_temporal,
    learned_drift,
    lpo_objective,
    ppo_drift,
)
from rl_algos.ppo import PPOHParams, ppo_loss
from rl_core import FINAL_RETURN_WINDOW, final_return


def random_params(seed: int, features: int, scale: float = 2.0) -> MetaMLP:
    p = init_meta_mlp(jax.random.PRNGKey(seed), features, 16, scale)
    return p._replace(b1=jax.random.normal(jax.random.PRNGKey(seed + 100), p.b1.shape))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learned_drift_is_a_valid_drift_for_any_parameters(seed: int) -> None:
    p = random_params(seed, 8)
    adv = jnp.linspace(-3.0, 3.0, 13)
    ones = jnp.ones_like(adv)
    drift = jax.jit(learned_drift)
    np.testing.assert_allclose(drift(p, ones, adv), 0.0, atol=1e-6)
    grad_r = jax.jit(jax.vmap(jax.grad(learned_drift, argnums=1), (None, 0, 0)))(p, ones, adv)
    np.testing.assert_allclose(grad_r, 0.0, atol=1e-5)
    r, a = jnp.meshgrid(jnp.exp(jnp.linspace(-1.0, 1.0, 41)), adv)
    values = drift(p, r, a)
    assert bool(jnp.all(values >= 0.0))
    assert float(values.max()) > 1e-3  # not trivially zero: the network does shape it


@pytest.mark.parametrize("progress", [0.0, 0.37, 0.95])
def test_temporally_aware_drift_is_a_valid_drift_at_every_progress(progress: float) -> None:
    p = random_params(5, 9)
    assert is_temporal(p) and not is_temporal(random_params(5, 8))
    adv = jnp.linspace(-3.0, 3.0, 13)
    ones = jnp.ones_like(adv)
    drift = jax.jit(learned_drift)
    np.testing.assert_allclose(drift(p, ones, adv, progress), 0.0, atol=1e-6)
    grad_r = jax.jit(jax.vmap(jax.grad(learned_drift, argnums=1), (None, 0, 0, None)))(
        p, ones, adv, progress)
    np.testing.assert_allclose(grad_r, 0.0, atol=1e-5)
    r, a = jnp.meshgrid(jnp.exp(jnp.linspace(-1.0, 1.0, 41)), adv)
    assert bool(jnp.all(drift(p, r, a, progress) >= 0.0))


def test_only_a_temporally_aware_drift_reads_the_progress() -> None:
    r, a = jnp.meshgrid(jnp.exp(jnp.linspace(-1.0, 1.0, 21)), jnp.linspace(-3.0, 3.0, 7))
    ta, plain = random_params(6, 9), random_params(6, 8)
    early, late = learned_drift(ta, r, a, 0.0), learned_drift(ta, r, a, 0.9)
    assert float(jnp.max(jnp.abs(early - late))) > 1e-3
    np.testing.assert_array_equal(learned_drift(plain, r, a, 0.0),
                                  learned_drift(plain, r, a, 0.9))


def test_ppo_update_passes_the_training_progress_to_the_objective() -> None:
    """The objective's `progress` is n/N at update n: an objective equal to its progress makes
    the policy loss −n/N exactly (no gradient flows through it)."""
    import rl_envs
    from rl_algos.ppo import PPOConfig, make_algorithm
    from rl_core import make_train

    config = PPOConfig(total_timesteps=4 * 16 * 5, num_envs=4, num_steps=16, num_minibatches=2,
                       num_epochs=2, hidden_sizes=(8,))
    algo = make_algorithm(rl_envs.make("gymnax/CartPole-v1"), config,
                          objective=lambda r, a, hp, progress: jnp.zeros_like(r) + progress)
    out = jax.jit(make_train(algo))(jax.random.PRNGKey(0), hparams_as_arrays(PPOHParams()))
    np.testing.assert_allclose(out.metrics["loss/policy"], -np.arange(5) / 5, atol=1e-7)


def test_without_the_anchor_the_raw_network_is_not_a_drift() -> None:
    """What `anchored` removes is really there: the raw MLP has a value and an r-slope at r=1."""
    p = random_params(0, 8)
    from rl_algos.lpo import drift_features

    adv = jnp.array([1.5])
    g = lambda r: meta_mlp(p, drift_features(r, adv))  # noqa: E731
    value, slope = jax.jvp(g, (jnp.ones(1),), (jnp.ones(1),))
    assert abs(float(value[0])) > 1e-3 and abs(float(slope[0])) > 1e-3


def test_anchored_of_a_cubic_is_its_relu_remainder() -> None:
    """g(x) = x³ anchored at x0 = 1: g − 1 − 3(x − 1) = (x − 1)²(x + 2), ReLU'd."""
    x = jnp.array([-3.0, -1.0, 0.0, 1.0, 2.0])
    out = anchored(lambda v: v**3, x, jnp.ones_like(x))
    expected = np.maximum((np.asarray(x) - 1) ** 2 * (np.asarray(x) + 2), 0.0)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_lpo_objective_gradient_at_ratio_one_is_the_advantage() -> None:
    """A valid drift leaves the policy gradient at r = 1 untouched: d/dr [rA − f] = A."""
    hp = LPOHParams(drift=random_params(3, 8))
    adv = jnp.array([-2.0, -0.5, 0.3, 1.7])
    g = jax.jit(jax.vmap(jax.grad(lambda r, a: lpo_objective(r, a, hp))))(jnp.ones(4), adv)
    np.testing.assert_allclose(g, adv, atol=1e-5)


def test_ppo_drift_matches_the_clipped_objective() -> None:
    r = jnp.array([0.5, 0.9, 1.0, 1.1, 1.5, 0.7, 1.4])
    a = jnp.array([1.0, -1.0, 2.0, 1.0, 1.0, -2.0, -1.0])
    clipped = jnp.minimum(r * a, jnp.clip(r, 0.8, 1.2) * a)
    np.testing.assert_allclose(r * a - ppo_drift(r, a, 0.2), clipped, rtol=1e-6)


def test_learned_value_loss_is_zero_and_flat_at_the_target() -> None:
    p = random_params(4, 4)
    t = jnp.linspace(-5.0, 5.0, 11)
    loss = jax.jit(learned_value_loss)
    np.testing.assert_allclose(loss(p, t, t), 0.0, atol=1e-6)
    g = jax.jit(jax.vmap(jax.grad(learned_value_loss, argnums=1), (None, 0, 0)))(p, t, t)
    np.testing.assert_allclose(g, 0.0, atol=1e-5)
    v, y = jnp.meshgrid(jnp.linspace(-5, 5, 21), t)
    assert bool(jnp.all(loss(p, v, y) >= 0.0))


def test_ppo_loss_value_hook_replaces_the_squared_error() -> None:
    b = 6
    z = jnp.zeros(b)
    value, target = jnp.arange(b, dtype=jnp.float32), jnp.ones(b)
    hp = PPOHParams()
    _, default = jax.jit(lambda *a: ppo_loss(*a, clip_value_loss=False))(
        z, z, jnp.ones(b), z, value, value, target, hp)
    np.testing.assert_allclose(default["loss/value"], 0.5 * np.mean((np.arange(b) - 1.0) ** 2))
    _, hooked = jax.jit(lambda *a: ppo_loss(
        *a, value_loss_fn=lambda v, vo, t, h: jnp.sum(jnp.abs(v - t)) + h.vf_coef))(
        z, z, jnp.ones(b), z, value, value, target, hp)
    np.testing.assert_allclose(hooked["loss/value"], np.sum(np.abs(np.arange(b) - 1.0)) + 0.5)


def test_hparams_with_meta_parameters_become_arrays() -> None:
    hp = hparams_as_arrays(LPOHParams(drift=init_drift(jax.random.PRNGKey(0), 4)))
    assert hp.lr.dtype == jnp.float32 and hp.drift.w1.shape == (8, 4)
    assert hparams_as_arrays(LPOHParams()).drift is None


def test_fitness_uses_the_one_final_return() -> None:
    """Evolution scores agents with rl_core's final return (jnp inside the program)."""
    s, c = jnp.array([100.0, 0.0, 30.0, 50.0]), jnp.array([1.0, 0.0, 1.0, 1.0])
    assert float(final_return(s, c, 0.5)) == pytest.approx(40.0)
    assert float(final_return(s, c)) == pytest.approx(50.0)  # 5% of 4: at least one update
    assert np.isnan(float(final_return(jnp.zeros(4), jnp.zeros(4), 0.5)))
    assert inspect.signature(make_evaluate).parameters["window_fraction"].default == \
        FINAL_RETURN_WINDOW


def test_combine_fitness_by_hand() -> None:
    returns = jnp.array([[[10.0, 20.0], [-50.0, -30.0]],   # member 0: env means 15, -40
                         [[30.0, 30.0], [-100.0, -100.0]]])  # member 1: 30, -100
    np.testing.assert_allclose(combine_fitness(returns), [(15 - 40) / 2, (30 - 100) / 2])
    base = jnp.array([20.0, -80.0])
    # 1 + (R - b)/|b|: member 0 -> 0.75 and 1.5; member 1 -> 1.5 and 0.75
    np.testing.assert_allclose(combine_fitness(returns, base), [1.125, 1.125], rtol=1e-6)
    nan = returns.at[1].set(jnp.nan)
    np.testing.assert_allclose(combine_fitness(nan), [-12.5, -12.5])  # worst finite fitness


def test_strategy_refuses_bad_settings() -> None:
    t = init_drift(jax.random.PRNGKey(0), 4)
    with pytest.raises(ConfigError, match="even population"):
        make_strategy("open_es", 5, t, 0.1, 0.01)
    with pytest.raises(ConfigError, match="known: open_es"):
        make_strategy("cmaes", 4, t, 0.1, 0.01)


@pytest.mark.parametrize("name", ["open_es", "snes", "cma_es"])
def test_generation_step_maximises_fitness(name: str) -> None:
    """On f(x) = −|x − 3|² the strategies (told −f: evosax minimises) move towards 3."""
    template = {"x": jnp.zeros(4)}
    strategy = make_strategy(name, 16, template, 0.5, 0.2)
    root = jax.random.PRNGKey(0)
    state = initial_state(strategy, root, template)
    asks, tells = strategy.es.ask._cache_size(), strategy.es.tell._cache_size()

    def evaluate(pop, keys):
        return -jnp.sum((pop["x"] - 3.0) ** 2, axis=-1)[:, None, None] + 0 * keys.sum()

    first = None
    for g in range(30):
        state, res = run_generation(strategy, state, root, g, evaluate, 1, 1,
                                    lambda r, ref: r[:, 0, 0])
        first = res.fitness.mean() if first is None else first
    mean = strategy.es.get_mean(state)["x"]
    assert res.fitness.mean() > first + 5.0
    assert float(jnp.mean(jnp.abs(mean - 3.0))) < 1.0, mean
    # One compilation of ask and of tell for all 30 generations (no silent recompiles; evosax's
    # jitted methods share one cache across strategies, hence the difference).
    assert strategy.es.ask._cache_size() - asks == 1
    assert strategy.es.tell._cache_size() - tells == 1
