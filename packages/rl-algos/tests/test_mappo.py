"""MAPPO: the network's split between a decentralised actor and a centralised critic, the policy
acting alike on the environment's own and on the centralised observations, and the settings it
refuses."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import rl_envs
from rl_algos.common.config import ConfigError
from rl_algos.common.distributions import distribution_for
from rl_algos.common.envs import centralised
from rl_algos.common.networks import actor_critic_factory
from rl_algos.common.policy import actor_critic_model
from rl_algos.common.recurrent import RecurrentActorCritic
from rl_algos.common.sgd import clip_by_part, network_parts
from rl_algos.mappo import MAPPOConfig, make_policy
from rl_core import Agent, Discrete, agents_as_batch


def test_the_actor_reads_its_own_part_and_the_critic_the_rest() -> None:
    model = actor_critic_factory(distribution_for(Discrete(5)), 10, (16,), "tanh",
                                 actor_size=4)(jax.random.PRNGKey(0))
    x = jax.random.normal(jax.random.PRNGKey(1), (10,))
    g_actor = jax.grad(lambda v: jnp.sum(model.policy_output(v) ** 2))(x)
    g_critic = jax.grad(model.value)(x)
    assert np.all(np.asarray(g_actor[4:]) == 0.0) and np.any(np.asarray(g_actor[:4]) != 0.0)
    assert np.all(np.asarray(g_critic[:4]) == 0.0) and np.any(np.asarray(g_critic[4:]) != 0.0)
    out, _ = model(x)
    np.testing.assert_array_equal(out, model.policy_output(x[:4]))  # own observation alone


def test_the_policy_acts_alike_on_own_and_centralised_observations() -> None:
    env = rl_envs.make("jaxmarl/MPE_simple_spread_v3")
    config = MAPPOConfig(hidden_sizes=(16,))
    policy = make_policy(env, config)
    model = actor_critic_model(centralised(env, "mappo"), config)(jax.random.PRNGKey(1))
    agent = Agent(eqx.filter(model, eqx.is_array))
    _, raw = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), 4))
    _, full = jax.vmap(centralised(env, "mappo").reset)(
        jax.random.split(jax.random.PRNGKey(0), 4))
    raw, full = agents_as_batch(raw), agents_as_batch(full)
    noise = policy.noise(jax.random.PRNGKey(2), (12,))
    for deterministic in (True, False):
        a_raw, e_raw = policy.act(agent, raw.observation, noise, deterministic)
        a_full, e_full = policy.act(agent, full.observation, noise, deterministic)
        np.testing.assert_array_equal(a_raw, a_full)
        np.testing.assert_allclose(e_raw["log_prob"], e_full["log_prob"], rtol=1e-6)
    assert np.all(np.asarray(e_raw["value"]) == 0.0)  # no critic input on the env's own
    assert np.any(np.asarray(e_full["value"]) != 0.0)


@pytest.mark.parametrize("field", ["normalize_observations", "fast_update"])
def test_settings_the_split_cannot_take_are_refused(field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        MAPPOConfig(**{field: True}).validate()


def test_the_recurrent_actor_and_critic_read_their_own_parts_and_keep_their_own_state() -> None:
    """Recurrent MAPPO's network: two GRUs, the actor's on `x[:4]`, the critic's on `x[4:]`; the
    state holds the actor's half then the critic's; `actor_step` (own observation alone) gives
    the actor's half and the policy output that `step` gives on the whole input."""
    from rl_algos.common.recurrent import RecurrentActorCritic

    model = RecurrentActorCritic(jax.random.PRNGKey(0), 10, 5, (16,), 8, (16,), "tanh", False,
                                 actor_size=4)
    assert model.hidden_size == 16
    x = jax.random.normal(jax.random.PRNGKey(1), (10,))
    h = jax.random.normal(jax.random.PRNGKey(2), (16,))
    first = jnp.asarray(False)
    g_actor = jax.grad(lambda v: jnp.sum(model.step(h, v, first)[1] ** 2))(x)
    g_critic = jax.grad(lambda v: model.step(h, v, first)[2])(x)
    assert np.all(np.asarray(g_actor[4:]) == 0.0) and np.any(np.asarray(g_actor[:4]) != 0.0)
    assert np.all(np.asarray(g_critic[:4]) == 0.0) and np.any(np.asarray(g_critic[4:]) != 0.0)
    g_state = jax.grad(lambda s: jnp.sum(model.step(s, x, first)[1] ** 2))(h)
    assert np.all(np.asarray(g_state[8:]) == 0.0)  # the actor never reads the critic's memory
    h_full, out_full, _ = model.step(h, x, first)
    h_own, out_own = model.actor_step(h, x[:4], first)
    np.testing.assert_array_equal(out_own, out_full)
    np.testing.assert_array_equal(h_own[:8], h_full[:8])
    np.testing.assert_array_equal(h_own[8:], h[8:])
    # A stored sequence replayed (both GRUs over all steps at once) gives the steps' outputs.
    xs = jax.random.normal(jax.random.PRNGKey(3), (6, 10))
    firsts = jnp.array([False, False, True, False, False, True])

    def f(s, inp):
        s, out, value = model.step(s, *inp)
        return s, (out, value)

    stepped = jax.lax.scan(f, h, (xs, firsts))[1]
    replayed = model.sequence(h, xs, firsts)
    for a, b in zip(jax.tree.leaves(replayed), jax.tree.leaves(stepped), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_recurrent_mappo_trains_and_its_policy_acts_on_the_envs_own_observations() -> None:
    """A few updates of `mappo_rnn` on simple_spread (its critic's GRU reads every agent's
    observation and the agent's id), then its policy with memory steps the environment's own
    observations with the actor alone: the actions and log-probabilities of the same actor on
    the centralised ones, a value of 0."""
    from rl_algos.mappo_rnn import MAPPORNNConfig
    from rl_algos.mappo_rnn import make_algorithm as make_rnn
    from rl_algos.mappo_rnn import make_policy as make_rnn_policy
    from rl_algos.ppo import PPOHParams
    from rl_core import make_train

    env = rl_envs.make("jaxmarl/MPE_simple_spread_v3")
    config = MAPPORNNConfig(total_timesteps=3 * 4 * 16, num_envs=4, num_steps=16,
                            num_minibatches=2, hidden_sizes=(16,), rnn_hidden=8,
                            head_sizes=(16,))
    res = jax.jit(make_train(make_rnn(env, config)))(jax.random.PRNGKey(0), PPOHParams())
    assert np.isfinite(np.asarray(res.metrics["loss/total"])).all()
    assert float(np.asarray(res.metrics["episode_count"]).sum()) > 0
    agent = Agent(res.state.train_state.params)
    policy = make_rnn_policy(env, config)
    _, raw = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), 4))
    _, full = jax.vmap(centralised(env, "mappo_rnn").reset)(
        jax.random.split(jax.random.PRNGKey(0), 4))
    raw, full = agents_as_batch(raw), agents_as_batch(full)
    state, first = policy.initial_state(12), jnp.ones((12,), jnp.bool_)
    assert state.shape == (12, 16)
    noise = policy.noise(jax.random.PRNGKey(2), (12,))
    a_raw, e_raw, h_raw = policy.step(agent, state, raw.observation, first, noise, False)
    a_full, e_full, h_full = policy.step(agent, state, full.observation, first, noise, False)
    np.testing.assert_array_equal(a_raw, a_full)
    np.testing.assert_allclose(e_raw["log_prob"], e_full["log_prob"], rtol=1e-6)
    np.testing.assert_array_equal(h_raw[:, :8], h_full[:, :8])
    assert np.all(np.asarray(e_raw["value"]) == 0.0)
    assert np.any(np.asarray(e_full["value"]) != 0.0)


@pytest.mark.heavy  # SMAX's heuristic enemy under the whole stack: a long compile on 2 cores
def test_the_win_rate_counts_each_smax_battle_once_through_the_training_stack() -> None:
    """SMAX 3m through the algorithms' stack (`make_vector_env`: agents batched, each battle's
    flags and `won` repeated per ally) under a scripted ally (attack the first enemy in range,
    else advance east): `episode_won_sum / episode_count` equals the share of battles won,
    counted per environment from the flags and rewards (a won battle's team return is 6)."""
    from rl_algos.common.envs import episode_metrics, make_vector_env
    from rl_core import rollout

    env = rl_envs.make("jaxmarl/SMAX_3m")
    venv = make_vector_env(env, 8)  # 24 actors

    def policy(ts, _key):
        mask = ts.info["action_mask"]
        attack = mask[:, 5:]
        action = jnp.where(attack.any(-1), attack.argmax(-1) + 5, jnp.where(mask[:, 1], 1, 4))
        return action, {}

    @jax.jit
    def run(key):
        env_state, ts = venv.reset(key)
        return rollout(venv, policy, env_state, ts, key, 100)[1]

    traj = run(jax.random.PRNGKey(0))
    metrics = episode_metrics(traj.info, traj.terminated, traj.truncated)
    over = np.asarray(traj.info["episode_over"]).reshape(100, 8, 3)[..., 0]  # per environment
    team = np.asarray(traj.info["episode_return"]).reshape(100, 8, 3)[..., 0]
    battles, wins = over.sum(), (over & (team > 5.99)).sum()
    assert battles >= 30 and 0 < wins < battles
    assert float(metrics["episode_count"]) == 3 * battles  # once per ally, as the wins
    assert float(metrics["episode_won_sum"]) / float(metrics["episode_count"]) == wins / battles


@pytest.mark.parametrize("recurrent", [False, True])
def test_the_actor_and_the_critic_are_clipped_each_by_its_own_norm(recurrent: bool) -> None:
    """Two networks, two clips (Yu et al., 2022; JaxMARL's two optimisers): a large value
    gradient leaves the policy's as it is, where one clip over both would shrink it."""
    key = jax.random.PRNGKey(0)
    model = (RecurrentActorCritic(key, 10, 5, (16,), 8, (16,), "relu", False, actor_size=4)
             if recurrent else
             actor_critic_factory(distribution_for(Discrete(5)), 10, (16,), "tanh",
                                  actor_size=4)(key))
    params = eqx.filter(model, eqx.is_array)
    parts = network_parts(model)
    assert parts is not None
    labels = parts(params)
    grads = jax.tree.map(lambda x, part: jnp.full_like(x, 0.001 if part == "actor" else 10.0),
                         params, labels)
    clip = clip_by_part(0.5, parts)
    clipped, _ = clip.update(grads, clip.init(params))

    def norm(tree: object, part: str) -> float:
        return float(optax.tree.norm([x for x, lab in zip(jax.tree.leaves(tree),
                                                            jax.tree.leaves(labels), strict=True)
                                        if lab == part]))

    assert norm(grads, "actor") < 0.5 < norm(grads, "critic")
    assert norm(clipped, "actor") == pytest.approx(norm(grads, "actor"), rel=1e-6)
    assert norm(clipped, "critic") == pytest.approx(0.5, rel=1e-5)
    # A network that is one (no centralised critic) keeps one clip over everything.
    assert network_parts(actor_critic_factory(distribution_for(Discrete(5)), 10, (16,),
                                              "tanh")(key)) is None
