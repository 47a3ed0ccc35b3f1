"""DQN: hand-computed Double DQN targets (online argmax, target-network value; terminated,
truncated, a masked action), n-step returns cut at episode ends, n-step windows gathered from the
replay buffer across an episode boundary, the dueling aggregation, the losses, the ε schedule,
hard and soft target updates, masked acting, image observations; and the proof that it learns
CartPole-v1 (slow)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos import ConfigError, get
from rl_algos.common import hparams_as_arrays
from rl_algos.common.qvalues import epsilon_at
from rl_algos.common.replay import ReplayBuffer
from rl_algos.dqn import (
    PRESETS,
    DQNConfig,
    DQNHParams,
    DQNNetwork,
    double_q_target,
    dueling_aggregate,
    make_algorithm,
    make_train,
    n_step_return,
    td_loss,
)
from rl_algos.dqn.train import n_step_batch
from rl_core import Box, Discrete, TimeStep

T, F = True, False


def test_double_dqn_target_by_hand() -> None:
    # Three one-step transitions, gamma 0.9: an ongoing one, a terminated one, a truncated one.
    ret, discount, last = n_step_return(jnp.array([[1.0], [2.0], [0.5]]),
                                        jnp.array([[F], [T], [F]]), jnp.array([[F], [F], [T]]),
                                        0.9)
    np.testing.assert_allclose(ret, [1.0, 2.0, 0.5])
    np.testing.assert_allclose(discount, [0.9, 0.0, 0.9], rtol=1e-6)  # truncated bootstraps
    np.testing.assert_array_equal(last, [0, 0, 0])
    online = jnp.array([[1.0, 5.0, 2.0], [3.0, 1.0, 0.0], [0.0, 9.0, 4.0]])
    target = jnp.array([[10.0, 20.0, 30.0], [7.0, 8.0, 9.0], [1.0, 2.0, 3.0]])
    mask = jnp.array([[T, T, T], [T, T, T], [T, F, T]])  # action 1 illegal in the third s'
    # Double DQN: the online argmax (1; -; 2, action 1 being illegal) valued by the target net:
    # y0 = 1 + 0.9*20 = 19; y1 = 2 (terminated); y2 = 0.5 + 0.9*3 = 3.2
    y = double_q_target(ret, discount, online, target, mask, double=True)
    np.testing.assert_allclose(y, [19.0, 2.0, 3.2], rtol=1e-6)
    # Ignoring the mask would pick the illegal action 1 (online 9): 0.5 + 0.9*2 = 2.3
    np.testing.assert_allclose(double_q_target(ret, discount, online, target, None)[2], 2.3,
                               rtol=1e-6)
    # DQN's own target: the target network's max over legal actions: 1 + 0.9*30 = 28
    y = double_q_target(ret, discount, online, target, mask, double=False)
    np.testing.assert_allclose(y, [28.0, 2.0, 3.2], rtol=1e-6)
    # No gradient reaches the target
    g = jax.grad(lambda o: double_q_target(ret, discount, o, target, mask).sum())(online)
    np.testing.assert_array_equal(g, jnp.zeros_like(online))


def test_n_step_return_stops_at_the_episode_boundary() -> None:
    r = jnp.array([[1.0, 2.0, 4.0]] * 5)
    term = jnp.array([[F, F, F], [F, T, F], [F, F, F], [F, F, T], [F, F, T]])
    trunc = jnp.array([[F, F, F], [F, F, F], [T, F, F], [F, F, F], [F, T, F]])
    ret, discount, last = n_step_return(r, term, trunc, 0.5)
    # 0: no end: 1 + 0.5*2 + 0.25*4 = 3, bootstrap 0.5^3 from step 2's next observation
    # 1: terminated at step 1: 1 + 0.5*2 = 2 (the 4 is the next episode's), no bootstrap
    # 2: truncated at step 0: 1, bootstrap 0.5 from step 0's final observation
    # 3: terminated at step 2: 3, no bootstrap
    # 4: truncated at step 1 (the termination after it is the next episode's): 2, 0.25
    np.testing.assert_allclose(ret, [3.0, 2.0, 1.0, 3.0, 2.0])
    np.testing.assert_allclose(discount, [0.125, 0.0, 0.5, 0.0, 0.25])
    np.testing.assert_array_equal(last, [2, 1, 0, 2, 1])


def test_n_step_windows_from_the_buffer_cross_an_episode_boundary() -> None:
    """Two environments stored time-major (env e's step t is item 2t + e): env 0's episode ends
    (terminated) at its step 1, env 1's is truncated at its step 0. The window gathers one
    environment's steps, stops at its episode's end and bootstraps from the right step's true
    next observation."""
    rb = ReplayBuffer(capacity=16, batch_size=2)
    obs = jnp.arange(8, dtype=jnp.float32)[:, None]  # item i observes i
    items = {"obs": obs, "action": jnp.arange(8, dtype=jnp.int32),
             "reward": jnp.array([1.0, 10.0, 2.0, 20.0, 4.0, 40.0, 8.0, 80.0]),
             "terminated": jnp.array([F, F, T, F, F, F, F, F]),
             "truncated": jnp.array([F, T, F, F, F, F, F, F]),
             "next_obs": 100.0 + obs,  # item i's true next observation is 100 + i
             "next_mask": jnp.eye(8, 3, dtype=jnp.bool_)}
    state = rb.add(rb.init(jax.tree.map(lambda x: x[0], items)), items)
    mb = n_step_batch(rb, state, jnp.array([0, 1, 4]), 3, 2, 0.5)
    # item 0 (env 0, t=0): steps 0, 2 (terminated) -> 1 + 0.5*2 = 2, no bootstrap
    # item 1 (env 1, t=0): truncated at once -> 10, bootstrap 0.5 * Q(100 + 1)
    # item 4 (env 0, t=2, a new episode): steps 4, 6 and item 8 (not written: zeros) ->
    #   4 + 0.5*8 + 0.25*0 = 8, bootstrap 0.125 from item 8's next observation
    np.testing.assert_allclose(mb["return"], [2.0, 10.0, 8.0])
    np.testing.assert_allclose(mb["discount"], [0.0, 0.5, 0.125])
    np.testing.assert_allclose(mb["next_obs"][:2, 0], [102.0, 101.0])
    np.testing.assert_array_equal(mb["obs"][:, 0], [0.0, 1.0, 4.0])
    np.testing.assert_array_equal(mb["action"], [0, 1, 4])
    np.testing.assert_array_equal(mb["next_mask"][:2], [[F, F, T], [F, T, F]])
    # ... which is why sampling never starts a window whose steps are not all written:
    # 8 items of 2 environments hold 8 - 2*2 = 4 complete 3-step windows (items 0..3).
    assert int(rb.num_windows(state, 3, 2)) == 4
    firsts = jax.vmap(lambda k: rb.sample_slots(state, k, 3, 2))(
        jax.random.split(jax.random.PRNGKey(0), 64))
    assert set(np.asarray(firsts).ravel().tolist()) == {0, 1, 2, 3}


def test_windows_after_the_ring_wraps_skip_overwritten_and_unwritten_items() -> None:
    rb = ReplayBuffer(capacity=7, batch_size=7)
    example = {"i": jnp.zeros((), jnp.int32)}
    state = rb.init(example)
    for start in range(0, 12, 2):  # 12 items, 2 per add: items 5..11 are kept
        state = rb.add(state, {"i": jnp.arange(start, start + 2, dtype=jnp.int32)})
    firsts = jax.vmap(lambda k: rb.sample_slots(state, k, 2, 2))(
        jax.random.split(jax.random.PRNGKey(1), 64))
    windows = np.asarray(state.experience["i"])[np.asarray(rb.window_slots(firsts.ravel(), 2,
                                                                           2))]
    np.testing.assert_array_equal(windows[:, 1], windows[:, 0] + 2)  # one env's next step
    assert set(windows[:, 0].tolist()) == {5, 6, 7, 8, 9}  # 10, 11 have no next step yet


def test_dueling_aggregation_subtracts_the_mean_advantage() -> None:
    q = dueling_aggregate(jnp.array([1.0, -2.0]), jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 3.0]]))
    # 1 + [1, 2, 3] - 2 = [0, 1, 2];  -2 + [0, 0, 3] - 1 = [-3, -3, 0]
    np.testing.assert_allclose(q, [[0.0, 1.0, 2.0], [-3.0, -3.0, 0.0]])
    net = DQNNetwork(jax.random.PRNGKey(0), (4,), 3, (8,), 0, "relu", False, dueling=True)
    x = jnp.array([0.1, -0.2, 0.3, 0.4])
    h = net.q.features(x)
    # the mean of Q over actions is the value stream
    np.testing.assert_allclose(jnp.mean(net(x)), net.value(h)[0], rtol=1e-5, atol=1e-6)
    plain = DQNNetwork(jax.random.PRNGKey(0), (4,), 3, (8,), 0, "relu", False, dueling=False)
    assert plain.value is None and plain(x).shape == (3,)


def test_losses_by_hand() -> None:
    q, y = jnp.array([1.5, -1.0]), jnp.array([1.0, 2.0])  # errors 0.5 and -3
    # huber: 0.5*0.25 = 0.125 and 3 - 0.5 = 2.5 -> 1.3125; mse: 0.125 and 4.5 -> 2.3125
    np.testing.assert_allclose(td_loss(q, y, "huber")[0], 1.3125)
    np.testing.assert_allclose(td_loss(q, y, "mse")[0], 2.3125)
    g = jax.grad(lambda q: td_loss(q, y, "huber")[0])(q)
    np.testing.assert_allclose(g, [0.25, -0.5])  # error inside [-1, 1], then clipped, / B


def test_epsilon_schedule_endpoints() -> None:
    hp = DQNHParams()  # 1 -> 0.05 over the first half of the run
    got = [float(epsilon_at(jnp.int32(u), 1000, hp)) for u in (0, 250, 500, 999)]
    np.testing.assert_allclose(got, [1.0, 0.525, 0.05, 0.05], rtol=1e-6)


class MaskedChainEnv:
    """Four actions, two legal at each step (`t % 4` and `(t+1) % 4`); a legal action earns +1,
    an illegal one -100 and ends the episode; truncated after 8 steps."""

    observation_space = Box(0.0, 1.0, (4,))
    action_space = Discrete(4)

    def _ts(self, t, reward, terminated, truncated):
        phase = t % 4
        mask = (jnp.arange(4) == phase) | (jnp.arange(4) == (phase + 1) % 4)
        return TimeStep(jax.nn.one_hot(phase, 4, dtype=jnp.float32), reward, terminated,
                        truncated, {"action_mask": mask})

    def reset(self, key):
        t, f = jnp.zeros((), jnp.int32), jnp.zeros((), jnp.bool_)
        return t, self._ts(t, jnp.zeros((), jnp.float32), f, f)

    def step(self, t, action, key):
        legal = (action == t % 4) | (action == (t + 1) % 4)
        t = t + 1
        return t, self._ts(t, jnp.where(legal, 1.0, -100.0).astype(jnp.float32), ~legal,
                           (t >= 8) & legal)


def test_never_takes_an_illegal_action_and_stores_the_next_states_mask() -> None:
    config = DQNConfig(total_timesteps=64, num_envs=4, num_steps=4, batch_size=8,
                       buffer_size=64, learning_starts=16, hidden_sizes=(16,), n_step=3)
    train = jax.jit(make_train(MaskedChainEnv(), config))
    res = train(jax.random.PRNGKey(0), hparams_as_arrays(DQNHParams(eps_finish=1.0)))
    count = np.asarray(res.metrics["episode_count"])
    np.testing.assert_array_equal(count, [0.0, 4.0, 0.0, 4.0])  # every episode lasts 8 steps
    np.testing.assert_array_equal(res.metrics["episode_return_sum"], 8.0 * count)
    assert float(res.metrics["learning"][-1]) == 1.0
    exp = res.state.extras.buffer.experience
    # the stored next mask is the true next state's: phase of the next observation
    phase = np.argmax(np.asarray(exp["next_obs"]), axis=-1)
    expected = (np.arange(4) == phase[:, None]) | (np.arange(4) == (phase[:, None] + 1) % 4)
    np.testing.assert_array_equal(exp["next_mask"], expected)


@pytest.mark.parametrize(("interval", "tau"), [(4, 1.0), (2, 0.5)], ids=["hard", "soft"])
def test_target_network_updates(interval: int, tau: float) -> None:
    """2 environment steps per update, learning from the first: a hard copy every 4 steps
    (every second update), or a Polyak step of 0.5 every update."""
    env = rl_envs.make("gymnax/CartPole-v1")
    config = DQNConfig(total_timesteps=40, num_envs=2, num_steps=1, batch_size=4,
                       buffer_size=32, learning_starts=0, hidden_sizes=(8,),
                       target_update_interval=interval)
    algo = make_algorithm(env, config)
    hp = hparams_as_arrays(DQNHParams(tau=tau, lr=1e-2))
    carry = algo.init(jax.random.PRNGKey(0), hp)
    update = jax.jit(algo.update)
    leaf = lambda tree: np.asarray(jax.tree.leaves(tree)[0])  # noqa: E731
    for i in range(1, 5):
        before = leaf(carry.extras.target)
        carry, _ = update(carry, hp)
        online, target = leaf(carry.train_state.params), leaf(carry.extras.target)
        if tau == 1.0:
            np.testing.assert_array_equal(target, online if i % 2 == 0 else before)
        else:
            np.testing.assert_allclose(target, before + 0.5 * (online - before), rtol=1e-6)
        assert not np.array_equal(online, before)


def test_image_observations_use_the_cnn_and_dueling_trains() -> None:
    env = rl_envs.make("gymnax/Breakout-MinAtar")
    config = DQNConfig(total_timesteps=64, num_envs=4, batch_size=8, buffer_size=64,
                       learning_starts=16, hidden_sizes=(16,), cnn_channels=4, dueling=True,
                       n_step=2, loss="huber")
    res = jax.jit(make_train(env, config))(jax.random.PRNGKey(0), hparams_as_arrays(DQNHParams()))
    assert res.state.train_state.params.q.conv is not None
    assert res.state.train_state.params.value is not None
    for k, v in res.metrics.items():
        assert np.all(np.isfinite(np.asarray(v))), k


def test_refusals_and_presets() -> None:
    with pytest.raises(ConfigError, match="loss must be one of"):
        DQNConfig(loss="l1").validate()
    with pytest.raises(ConfigError, match="n_step"):
        DQNConfig(buffer_size=40, n_step=4, num_envs=10, batch_size=8).validate()
    with pytest.raises(ConfigError, match="needs a Discrete action space"):
        make_algorithm(rl_envs.make("gymnax/Pendulum-v1"), DQNConfig())
    with pytest.raises(ConfigError, match="tau"):
        DQNHParams(tau=0.0).validate()
    spec = get("dqn")
    assert spec.action_masks and spec.action_spaces == (Discrete,)
    for static, hps, _ in PRESETS.values():
        DQNConfig(**static).validate()
        DQNHParams(**hps).validate()


def final_returns(metrics, fraction: float = 0.05) -> np.ndarray:
    window = max(1, int(round(fraction * metrics["episode_count"].shape[1])))
    return np.asarray(metrics["episode_return_sum"][:, -window:].sum(1)
                      / metrics["episode_count"][:, -window:].sum(1))


@pytest.mark.slow
def test_dqn_learns_cartpole() -> None:
    """Eight seeds of the classic_control preset (5e5 steps): every seed's training episodes
    of the last 5% of updates (ε = 0.01 exploring) must average >= 475 of the 500 possible; a
    random policy scores ~22. docs/algorithms.md has the figures."""
    env = rl_envs.make("gymnax/CartPole-v1")
    static, hps, _ = get("dqn").presets["classic_control"]
    train = make_train(env, DQNConfig(**static))
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (8,)), hparams_as_arrays(DQNHParams(**hps)))
    out = jax.jit(jax.vmap(train))(jax.random.split(jax.random.PRNGKey(0), 8), hp)
    final = final_returns(out.metrics)
    assert np.all(final >= 475.0), f"final returns {final}"
