"""Recurrent PPO's pieces on hand-computed values: the GRU's hidden state is reset at episode
boundaries, sequences replayed from the stored initial states give the rollout's own outputs, and
minibatches keep whole environments."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common.envs import make_vector_env
from rl_algos.common.policy import model_structure
from rl_algos.common.recurrent import (
    RecurrentActorCritic,
    gru_sequence,
    recurrent_model,
    reset_hidden,
)
from rl_algos.common.shuffle import shuffled_minibatches
from rl_algos.ppo import PPOHParams
from rl_algos.ppo_rnn import PPORNNConfig, make_algorithm
from rl_algos.ppo_rnn.train import replay, sequence_batch
from rl_core import Agent, Transition, recurrent_rollout


def test_reset_hidden_zeroes_the_states_of_new_episodes() -> None:
    h = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = reset_hidden(h, jnp.array([True, False, True]))
    np.testing.assert_array_equal(out, [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])


def tiny_model() -> RecurrentActorCritic:
    """One input, one GRU unit, no torso or head layers; the GRU's only non-zero weight feeds
    the input to its candidate, and the value head reads the hidden state: with zero gates
    r = z = sigmoid(0) = 1/2, so h' = tanh(x) + (h - tanh(x)) / 2 and value = h'."""
    m = RecurrentActorCritic(jax.random.PRNGKey(0), d_obs=1, d_out=2, hidden=(), rnn_hidden=1,
                             head_sizes=(), activation="tanh", gaussian=False)
    m = eqx.tree_at(lambda m: m.cell.weight_ih, m, jnp.array([[0.0], [0.0], [1.0]]))
    m = eqx.tree_at(lambda m: m.cell.weight_hh, m, jnp.zeros((3, 1)))
    m = eqx.tree_at(lambda m: m.cell.bias, m, jnp.zeros((3,)))
    m = eqx.tree_at(lambda m: m.cell.bias_n, m, jnp.zeros((1,)))
    m = eqx.tree_at(lambda m: m.value_head.weight, m, jnp.ones((1, 1)))
    return eqx.tree_at(lambda m: m.value_head.bias, m, jnp.zeros((1,)))


def test_gru_step_resets_the_carry_before_the_step_of_a_new_episode() -> None:
    m = tiny_model()
    x, h = jnp.array([1.0]), jnp.array([2.0])
    t = np.tanh(1.0)
    h_on, _, v_on = m.step(h, x, jnp.array(False))
    h_new, _, v_new = m.step(h, x, jnp.array(True))
    np.testing.assert_allclose(h_on, [t + (2.0 - t) / 2], rtol=1e-6)  # 1.38080
    np.testing.assert_allclose(h_new, [t / 2], rtol=1e-6)  # 0.38080: as from zeros
    np.testing.assert_allclose([v_on, v_new], [t + (2.0 - t) / 2, t / 2], rtol=1e-6)
    # A sequence with a reset at step 2: h = 2 -> 1.3808 -> 0.3808 (reset) -> 0.5712.
    _, values = m.sequence(h, jnp.ones((3, 1)), jnp.array([False, True, False]))
    np.testing.assert_allclose(values, [t + (2 - t) / 2, t / 2, t + (t / 2 - t) / 2], rtol=1e-6)


def test_gru_sequence_is_equinoxs_cell_scanned_with_resets() -> None:
    """The split GRU (input projection of all steps first, the recurrence in the scan) gives
    the states of `eqx.nn.GRUCell` stepped one by one, the state zeroed before each `first`."""
    k_cell, k_x, k_h, k_f = jax.random.split(jax.random.PRNGKey(3), 4)
    cell = eqx.nn.GRUCell(5, 7, key=k_cell)
    xs, h0 = jax.random.normal(k_x, (12, 5)), jax.random.normal(k_h, (7,))
    firsts = jnp.zeros((12,), bool).at[jnp.array([0, 4, 5, 9])].set(True)

    def f(h, inp):
        h = cell(inp[0], reset_hidden(h, inp[1]))
        return h, h

    expected = jax.lax.scan(f, h0, (xs, firsts))[1]
    np.testing.assert_allclose(gru_sequence(cell, h0, xs, firsts), expected, rtol=1e-5,
                               atol=1e-6)
    no_reset = gru_sequence(cell, h0, xs, jnp.zeros((12,), bool))
    assert not np.allclose(no_reset[4:], expected[4:], atol=1e-3)  # the resets matter


def small_config(**kw) -> PPORNNConfig:
    return PPORNNConfig(**{**dict(total_timesteps=8 * 32 * 4, num_envs=8, num_steps=32,
                                  num_minibatches=4, hidden_sizes=(16,), rnn_hidden=8,
                                  head_sizes=(16,)), **kw})


def test_replayed_sequences_give_the_rollouts_outputs() -> None:
    """After two updates (a non-zero hidden state carried into the rollout, CartPole without
    velocities ending episodes inside it), replaying each environment's sequence from the stored
    initial state with the stored `first` flags gives the log-probabilities and values the
    rollout acted with; without the resets or from zeros it does not."""
    env = rl_envs.make("gymnax/CartPole-v1", obs_keep="0,2")
    config = small_config()
    algo = make_algorithm(env, config)
    hp = PPOHParams()
    carry = algo.init(jax.random.PRNGKey(1), hp)
    for _ in range(2):
        carry, _ = jax.jit(algo.update)(carry, hp)
    h0 = carry.extras
    assert float(jnp.abs(h0).max()) > 0.0
    policy = algo.policy
    params = carry.train_state.params

    def act(ts, noise, h):
        first = ts.terminated | ts.truncated
        action, extras, h = policy.step(Agent(params), h, ts.observation, first, noise, False)
        return action, {**extras, "first": first}, h

    venv = make_vector_env(env, config.num_envs)
    noise = policy.noise(jax.random.PRNGKey(2), (config.num_steps, config.num_envs))
    _, traj = jax.jit(lambda c: recurrent_rollout(
        venv, act, h0, c.env_state, c.timestep, c.key, config.num_steps, policy_inputs=noise))(
        carry)
    firsts = np.asarray(traj.extras["first"])
    assert firsts[1:].any() and not firsts.all()  # episodes end inside the rollout
    model = eqx.combine(params, model_structure(recurrent_model(env, config))[1])
    batch = sequence_batch(traj, h0)
    out, value = replay(model, batch)
    logits = jax.nn.log_softmax(out)
    log_prob = jnp.take_along_axis(logits, batch["action"].reshape(-1)[:, None], 1)[:, 0]
    np.testing.assert_allclose(value, batch["value"].reshape(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(log_prob, batch["log_prob"].reshape(-1), rtol=1e-5, atol=1e-6)
    _, v_zero = replay(model, {**batch, "h0": jnp.zeros_like(h0)})
    _, v_noreset = replay(model, {**batch, "first": jnp.zeros_like(batch["first"])})
    assert not np.allclose(v_zero, batch["value"].reshape(-1), atol=1e-4)
    assert not np.allclose(v_noreset, batch["value"].reshape(-1), atol=1e-4)


def test_minibatches_keep_whole_environments() -> None:
    """A rollout `[T=5, N=8]` whose observation at (t, n) is 100 n + t, cut into 4 minibatches:
    each row of a minibatch is one environment's 5 steps in order, with that environment's
    initial hidden state, and every environment appears exactly once."""
    t_, n_ = 5, 8
    code = 100.0 * jnp.arange(n_)[None, :] + jnp.arange(t_)[:, None]  # [T, N]
    zeros = jnp.zeros((t_, n_))
    traj = Transition(code[..., None], code.astype(jnp.int32), zeros, zeros.astype(bool),
                      zeros.astype(bool), code[..., None],
                      {"value": code, "first": zeros.astype(bool), "hidden": code[..., None]}, {})
    h0 = jnp.stack([jnp.full((3,), 100.0 * n) for n in range(n_)])
    batch = sequence_batch(traj, h0, adv=code)
    assert "hidden" not in batch
    assert batch["obs"].shape == (n_, t_, 1) and batch["h0"].shape == (n_, 3)
    mbs = shuffled_minibatches(jax.random.PRNGKey(0), batch, 4)
    assert mbs["obs"].shape == (4, 2, t_, 1)
    seen = []
    for mb in range(4):
        for row in range(2):
            env = int(mbs["obs"][mb, row, 0, 0]) // 100
            seen.append(env)
            np.testing.assert_array_equal(mbs["obs"][mb, row, :, 0], 100 * env + np.arange(t_))
            np.testing.assert_array_equal(mbs["action"][mb, row], 100 * env + np.arange(t_))
            np.testing.assert_array_equal(mbs["adv"][mb, row], 100 * env + np.arange(t_))
            np.testing.assert_array_equal(mbs["h0"][mb, row], [100.0 * env] * 3)
    assert sorted(seen) == list(range(n_))
    assert seen != list(range(n_))  # shuffled
