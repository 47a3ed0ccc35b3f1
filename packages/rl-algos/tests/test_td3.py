"""TD3: hand-computed targets and losses, termination vs truncation from the environment to the
target, actions rescaled to the Box bounds, warm-up and delayed target updates, refusals; and (slow)
the proof that it learns Pendulum."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos import ConfigError, get
from rl_algos.common import hparams_as_arrays
from rl_algos.common.dense import TwinCritic, critic_loss, dense
from rl_algos.td3 import (
    PRESETS,
    TD3Config,
    TD3HParams,
    actor_loss,
    clipped_double_q_target,
    make_algorithm,
    smoothed_target_action,
)
from rl_algos.td3.train import polyak
from rl_core import Box, Discrete, TimeStep, final_return


def test_clipped_double_q_target_by_hand() -> None:
    reward = jnp.array([1.0, 2.0, 3.0])
    next_q = jnp.array([[5.0, 4.0], [10.0, 20.0], [-1.0, 7.0]])  # [B, 2]: the min is taken
    # y0 = 1 + 0.9*4 = 4.6; y1 terminated: 2; y2 = 3 + 0.9*(-1) = 2.1
    y = clipped_double_q_target(reward, jnp.array([False, True, False]), next_q, 0.9)
    np.testing.assert_allclose(y, [4.6, 2.0, 2.1], rtol=1e-6)
    # gamma 0: the reward alone whatever the flags
    np.testing.assert_allclose(clipped_double_q_target(reward, jnp.array([False] * 3), next_q,
                                                       0.0), reward)


def test_critic_and_actor_losses_by_hand() -> None:
    q = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    # errors to [2, 2]: critic 1 (-1, 1) -> mean sq 1; critic 2 (0, 2) -> 2; sum 3
    loss, m = critic_loss(q, jnp.array([2.0, 2.0]))
    np.testing.assert_allclose([loss, m["q_mean"]], [3.0, 2.0])
    # gradient of the loss reaches q, never the target
    g_q, g_y = jax.grad(lambda q, y: critic_loss(q, y)[0], argnums=(0, 1))(q, jnp.ones(2))
    np.testing.assert_allclose(g_q, [[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(g_y, [0.0, 0.0])
    np.testing.assert_allclose(actor_loss(jnp.array([1.0, 3.0]))[0], -2.0)


def test_target_smoothing_noise_is_clipped_and_actions_stay_in_bounds() -> None:
    a = jnp.array([[0.0, 0.9, -0.95]] * 1000)
    z = jax.random.normal(jax.random.PRNGKey(0), a.shape)
    np.testing.assert_allclose(smoothed_target_action(a, z, 0.0, 0.5), a)
    out = np.asarray(smoothed_target_action(a, z, 10.0, 0.3))
    assert np.all(out >= -1.0) and np.all(out <= 1.0)
    np.testing.assert_allclose(np.abs(out[:, 0]).max(), 0.3, rtol=1e-6)  # noise at its clip
    np.testing.assert_allclose(out[:, 1].max(), 1.0)  # 0.9 + 0.3 clipped to the bound
    np.testing.assert_allclose(polyak(jnp.zeros(3), jnp.ones(3), 0.005), [0.005] * 3)


class TimerEnv:
    """obs = [t, last env action]; reward t; the episode ends after 3 steps, by termination or
    by truncation (a time limit): the two must reach the target differently."""

    observation_space = Box(-100.0, 100.0, (2,))
    action_space = Box(0.0, 10.0, (1,))

    def __init__(self, terminate: bool):
        self.terminate = terminate

    def reset(self, key):
        f = jnp.zeros((), jnp.bool_)
        return jnp.zeros((), jnp.int32), TimeStep(jnp.zeros(2), jnp.zeros(()), f, f, {})

    def step(self, t, action, key):
        t = t + 1
        end = t >= 3
        obs = jnp.stack([t.astype(jnp.float32), action[0]])
        return t, TimeStep(obs, t.astype(jnp.float32), end & self.terminate,
                           end & (not self.terminate), {})


SMALL = TD3Config(total_timesteps=64, num_envs=1, num_steps=4, gradient_steps=2, batch_size=4,
                  buffer_size=16, learning_starts=4, hidden_sizes=(8,))


@pytest.mark.parametrize("terminate", [True, False], ids=["terminated", "truncated"])
def test_episode_ends_reach_the_buffer_and_the_target_correctly(terminate: bool) -> None:
    algo = make_algorithm(TimerEnv(terminate), SMALL)
    hp = hparams_as_arrays(TD3HParams())
    carry = algo.init(jax.random.PRNGKey(0), hp)
    carry, metrics = jax.jit(algo.update)(carry, hp)  # warm-up: 4 random steps, no learning
    exp = jax.tree.map(lambda x: np.asarray(x[:4]), carry.extras.buffer.experience)
    # steps t=0..3: the third step ends the episode; its next_obs is the true final one (t=3),
    # not the reset observation, and only termination is recorded as such.
    np.testing.assert_array_equal(exp["obs"][:, 0], [0, 1, 2, 0])
    np.testing.assert_array_equal(exp["next_obs"][:, 0], [1, 2, 3, 1])
    np.testing.assert_array_equal(exp["terminated"], [False, False, terminate, False])
    assert float(metrics["episode_count"]) == 1 and float(metrics["episode_return_sum"]) == 6
    # Actions: the agent's in [-1, 1], the environment's rescaled to [0, 10].
    unit, env_action = exp["action"][:, 0], exp["next_obs"][:, 1]
    assert np.all(np.abs(unit) <= 1.0)
    np.testing.assert_allclose(env_action, 5.0 + 5.0 * unit, rtol=1e-5)
    # The target of the episode's last step: r + gamma * min Q' only when truncated.
    y = clipped_double_q_target(jnp.asarray(exp["reward"]), jnp.asarray(exp["terminated"]),
                                jnp.full((4, 2), 10.0), 0.5)
    np.testing.assert_allclose(y[2], 3.0 if terminate else 3.0 + 0.5 * 10.0)


def test_warm_up_then_learning_with_delayed_targets() -> None:
    algo = make_algorithm(TimerEnv(False), SMALL)
    hp = hparams_as_arrays(TD3HParams(tau=1.0))
    update = jax.jit(algo.update)
    carry0 = algo.init(jax.random.PRNGKey(1), hp)
    carry1, m1 = update(carry0, hp)  # 0 steps stored before it: warm-up, nothing learnt
    assert float(m1["learning"]) == 0.0
    for a, b in zip(jax.tree.leaves(carry0.train_state.params),
                    jax.tree.leaves(carry1.train_state.params), strict=True):
        np.testing.assert_array_equal(a, b)
    carry2, m2 = update(carry1, hp)  # 4 steps stored: learns
    assert float(m2["learning"]) == 1.0 and np.isfinite(float(m2["critic_loss"]))
    # tau = 1: after the update's last delayed step the targets equal the online networks
    for p, t in zip(jax.tree.leaves(carry2.train_state.params),
                    jax.tree.leaves(carry2.extras.target), strict=True):
        np.testing.assert_array_equal(p, t)
    changed = [not np.array_equal(a, b) for a, b in zip(
        jax.tree.leaves(carry1.train_state.params), jax.tree.leaves(carry2.train_state.params),
        strict=True)]
    assert all(changed)


def test_refusals_teach_the_fix() -> None:
    class DiscreteEnv(TimerEnv):
        action_space = Discrete(3)

    with pytest.raises(ConfigError, match="Box"):
        make_algorithm(DiscreteEnv(False), SMALL)
    with pytest.raises(ConfigError, match="Box"):
        get("td3").check_env(rl_envs.make("gymnax/CartPole-v1"))
    with pytest.raises(ConfigError, match="multiple of policy_delay"):
        TD3Config(gradient_steps=3).validate()
    with pytest.raises(ConfigError, match="buffer_size"):
        TD3Config(buffer_size=100, batch_size=100, gradient_steps=2).validate()


def test_presets_follow_the_family() -> None:
    spec = get("td3")
    pendulum = rl_envs.make("gymnax/Pendulum-v1")
    assert spec.default_preset("classic_control", pendulum.action_space) == "classic_control"
    # brax ids (family 'brax') get TD3's own brax preset; other Box families fall back to
    # 'continuous_control'
    assert spec.default_preset("brax", pendulum.action_space) == "brax"
    assert spec.default_preset("continuous_control", pendulum.action_space) == \
        "continuous_control"
    assert spec.default_preset("misc", pendulum.action_space) == "continuous_control"
    # algorithms for every action space keep choosing 'continuous_control' for Box actions
    assert get("ppo").default_preset("classic_control", pendulum.action_space) == \
        "continuous_control"
    for static, hps, _ in PRESETS.values():
        TD3Config(**static).validate()
        TD3HParams(**hps).validate()


@pytest.mark.slow
def test_td3_learns_pendulum() -> None:
    """Two seeds of the Pendulum preset for 4e4 steps: random actions score about -1200; the
    training episodes (with exploration noise) of the last 5% of updates must beat -600."""
    from rl_algos.td3 import make_train

    static, hps, _ = PRESETS["classic_control"]
    cfg = TD3Config(**{**static, "total_timesteps": 40_000})
    train = make_train(rl_envs.make("gymnax/Pendulum-v1"), cfg)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (2,)), hparams_as_arrays(TD3HParams(**hps)))
    out = jax.jit(jax.vmap(train))(jax.random.split(jax.random.PRNGKey(0), 2), hp)
    ret = np.asarray(final_return(out.metrics["episode_return_sum"],
                                  out.metrics["episode_count"]))
    assert ret.mean() > -600, ret


def test_dense_gradient_equals_autodiff_of_the_plain_layer() -> None:
    """`dense`'s hand-written backward pass (transposed output gradient for the weights) gives
    the gradients of `x @ W.T + b`, also under `vmap` over members as training runs it."""
    k = jax.random.split(jax.random.PRNGKey(3), 4)
    x, w = jax.random.normal(k[0], (5, 7, 4)), jax.random.normal(k[1], (5, 3, 4))
    b, g = jax.random.normal(k[2], (5, 3)), jax.random.normal(k[3], (5, 7, 3))

    def plain(x, w, b):
        return jnp.sum(jnp.tanh(x @ w.T + b) * g[0])

    def ours(x, w, b):
        return jnp.sum(jnp.tanh(dense(x, w, b)) * g[0])

    for got, want in zip(jax.grad(ours, (0, 1, 2))(x[0], w[0], b[0]),
                         jax.grad(plain, (0, 1, 2))(x[0], w[0], b[0]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    batched = jax.vmap(jax.grad(lambda x, w, b, g: jnp.sum(dense(x, w, b) * g), (0, 1, 2)))
    dx, dw, db = batched(x, w, b, g)
    np.testing.assert_allclose(dx, jnp.einsum("nbo,noi->nbi", g, w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dw, jnp.einsum("nbo,nbi->noi", g, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(db, g.sum(1), rtol=1e-5, atol=1e-6)


def test_twin_critic_heads_are_independent_networks() -> None:
    """`q(k)` is critic k alone and `__call__` stacks them; the two critics differ (separate
    initialisation), and the first critic's gradient does not touch the second's parameters."""
    critic = TwinCritic(jax.random.PRNGKey(0), 3, 2, (8, 8), "relu")
    obs, act = jnp.ones((4, 3)), jnp.zeros((4, 2))
    q = critic(obs, act)
    assert q.shape == (4, 2) and not np.allclose(q[:, 0], q[:, 1])
    np.testing.assert_allclose(q[:, 1], critic.q(1, obs, act), rtol=1e-6)
    grads = jax.grad(lambda c: jnp.sum(c.q(0, obs, act)))(critic)
    assert all(float(jnp.abs(leaf[1]).max()) == 0.0 for leaf in jax.tree.leaves(grads))
    assert any(float(jnp.abs(leaf[0]).max()) > 0.0 for leaf in jax.tree.leaves(grads))


def test_warm_up_actions_are_uniform_over_the_bounds_then_noisy_around_the_policy() -> None:
    """Warm-up actions come from the update's one normal draw as `erf(z / sqrt 2)`: they must
    fill the Box uniformly (quartiles of the unit action at 1/4 each, variance 1/3); once
    learning starts the same draw is Gaussian noise of std 0.1 around the actor's output."""
    cfg = TD3Config(total_timesteps=4096, num_envs=64, num_steps=8, gradient_steps=2,
                    batch_size=4, buffer_size=4096, learning_starts=1024, hidden_sizes=(8,))
    algo = make_algorithm(TimerEnv(False), cfg)
    hp = hparams_as_arrays(TD3HParams())
    update = jax.jit(algo.update)
    carry = algo.init(jax.random.PRNGKey(2), hp)
    for _ in range(2):  # 2 x 512 steps of warm-up
        carry, m = update(carry, hp)
        assert float(m["learning"]) == 0.0
    unit = np.asarray(carry.extras.buffer.experience["action"][:1024, 0])
    assert unit.min() >= -1.0 and unit.max() <= 1.0
    quartiles = np.histogram(unit, bins=4, range=(-1.0, 1.0))[0] / unit.size
    np.testing.assert_allclose(quartiles, 0.25, atol=0.05)
    np.testing.assert_allclose(unit.var(), 1 / 3, atol=0.04)
    carry, m = update(carry, hp)
    assert float(m["learning"]) == 1.0
    noisy = np.asarray(carry.extras.buffer.experience["action"][1024:1536, 0])
    assert 0.05 < noisy.std() < 0.2, noisy.std()  # the deterministic actor's action is shared
