"""The self-play snapshot pool (`rl_algos.common.pool`): the ring's writes and draws, who moves
in a pool game, PQN carrying the pool through its updates, and the refusals."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_algos.common.config import ConfigError
from rl_algos.common.pool import (
    add_snapshot,
    draw_snapshot,
    init_pool,
    pool_mover,
    pool_results,
)
from rl_algos.pqn import PQNConfig, PQNHParams
from rl_algos.pqn.train import make_algorithm


def test_the_ring_keeps_the_last_snapshots_and_draws_only_filled_slots() -> None:
    pool = init_pool({"w": jnp.float32(0.0)}, 3)
    assert int(pool.added) == 1
    # with one snapshot every draw is slot 0, whatever the key
    draws = {float(draw_snapshot(pool, jax.random.PRNGKey(i))["w"]) for i in range(20)}
    assert draws == {0.0}
    for update in range(8):  # every 2 updates: after updates 1, 3, 5, 7
        pool = add_snapshot(pool, {"w": jnp.float32(update + 1)}, jnp.int32(update), 2)
    assert int(pool.added) == 5
    # slots written in order 1, 2, 0, 1: the initial snapshot and the first one (2) overwritten
    np.testing.assert_array_equal(np.sort(np.asarray(pool.params["w"])), [4.0, 6.0, 8.0])
    draws = {float(draw_snapshot(pool, jax.random.PRNGKey(i))["w"]) for i in range(60)}
    assert draws == {4.0, 6.0, 8.0}


def test_the_snapshot_moves_as_player_one_of_the_pool_games_only() -> None:
    mover = pool_mover(jnp.array([0, 1, 1, 0, 1], jnp.int32), num_envs=5, pool_games=2)
    np.testing.assert_array_equal(np.asarray(mover), [False, True, False, False, False])


def test_the_record_against_the_pool_is_from_the_learners_side() -> None:
    # 2 steps x 4 environments, the first 3 against the pool. Env 0: the learner's winning move;
    # env 1: the snapshot's winning move; env 2: a draw (then a move of a new game); env 3 (pure
    # self-play) ends too but is not counted.
    reward = jnp.array([[0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    ended = jnp.array([[False, False, True, True], [True, True, False, False]])
    snapshot_moved = jnp.array([[True, False, False, False], [False, True, True, False]])
    got = pool_results(reward, ended, snapshot_moved, pool_games=3)
    assert float(got["pool/games"]) == 3.0
    assert float(got["pool/score"]) == 0.0  # (+1 - 1 + 0) / 3
    got = pool_results(reward[:1], ended[:1] & False, snapshot_moved[:1], pool_games=3)
    assert float(got["pool/games"]) == 0.0 and float(got["pool/score"]) == 0.0


def test_pqn_carries_the_pool_through_its_updates() -> None:
    env = rl_envs.make("pgx/tic_tac_toe", opponent="self")
    config = PQNConfig(total_timesteps=4 * 64, num_envs=8, num_steps=8, num_epochs=1,
                       num_minibatches=2, hidden_size=16, num_layers=1, cnn_channels=0,
                       pool_size=2, pool_every=2, pool_fraction=0.5)
    algo = make_algorithm(env, config)
    hp = PQNHParams(lr=1e-2)
    carry = algo.init(jax.random.PRNGKey(0), hp)
    first = carry.extras.params
    update = jax.jit(algo.update)
    for _ in range(4):
        carry, metrics = update(carry, hp)
    assert int(carry.extras.added) == 3  # the initial network, then after updates 2 and 4
    # slot 1 holds the network after update 2, slot 0 (overwriting the initial network) the
    # network after update 4: the learner's own
    for mine, kept in zip(jax.tree.leaves(carry.train_state.params),
                          jax.tree.leaves(carry.extras.params), strict=True):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(kept[0]))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(jax.tree.leaves(first),
                                                              jax.tree.leaves(carry.extras.params),
                                                              strict=True))
    assert np.isfinite(float(metrics["loss/q"]))
    assert 0 <= float(metrics["pool/games"]) and -1 <= float(metrics["pool/score"]) <= 1


def test_the_pool_needs_a_self_play_environment() -> None:
    env = rl_envs.make("pgx/tic_tac_toe")  # against the built-in random player
    with pytest.raises(ConfigError, match="opponent=self"):
        make_algorithm(env, PQNConfig(num_envs=8, num_steps=8, pool_size=2))
    selfplay = rl_envs.make("pgx/tic_tac_toe", opponent="self")
    with pytest.raises(ConfigError, match="pool_fraction"):
        make_algorithm(selfplay, PQNConfig(num_envs=8, num_steps=8, pool_size=2,
                                           pool_fraction=0.01))


@pytest.mark.parametrize("bad", [dict(pool_size=-1), dict(pool_every=0),
                                 dict(pool_fraction=1.5), dict(pool_size=2, pool_fraction=0.01)])
def test_the_pool_ranges_are_checked_by_every_config_that_has_them(bad) -> None:
    from rl_algos.pqn_rnn.config import PQNRNNConfig

    for cls in (PQNConfig, PQNRNNConfig):
        with pytest.raises(ConfigError, match="pool"):
            cls(num_envs=8, num_minibatches=2, **bad).validate()


def test_ppo_loss_leaves_the_snapshots_moves_out_of_the_policy_terms() -> None:
    from rl_algos.ppo import PPOHParams
    from rl_algos.ppo.losses import ppo_loss

    k = jax.random.split(jax.random.PRNGKey(3), 6)
    b = 32
    log_prob, old, adv, ent, value, target = (jax.random.normal(x, (b,)) for x in k)
    hp = PPOHParams()
    weight = (jnp.arange(b) % 3 != 0).astype(jnp.float32)  # every third move is the snapshot's
    plain, _ = ppo_loss(log_prob, old, adv, ent, value, value, target, hp)
    ones, _ = ppo_loss(log_prob, old, adv, ent, value, value, target, hp, weight=jnp.ones(b))
    np.testing.assert_allclose(float(ones), float(plain), rtol=1e-5)
    # Whatever the snapshot's moves' log-probabilities, advantages and entropies, the loss and
    # its gradient are the same: the learner's policy learns only from its own moves.
    noise = jnp.where(weight == 0, 5.0, 0.0)

    def total(lp, a, e):
        return ppo_loss(lp, old, a, e, value, value, target, hp, weight=weight)[0]

    got = jax.grad(total)(log_prob, adv, ent)
    moved = jax.grad(total)(log_prob + noise, adv - noise, ent + noise)
    np.testing.assert_allclose(float(total(log_prob, adv, ent)),
                               float(total(log_prob + noise, adv - noise, ent + noise)),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), np.asarray(moved), rtol=1e-5, atol=1e-7)
    assert np.all(np.asarray(got)[np.asarray(weight) == 0] == 0.0)
    # ... while the value loss keeps every position.
    v_grad = jax.grad(lambda v: ppo_loss(log_prob, old, adv, ent, v, v, target, hp,
                                         weight=weight)[0])(value)
    assert np.all(np.asarray(v_grad)[np.asarray(weight) == 0] != 0.0)


@pytest.mark.parametrize("fast_update", [False, True])
def test_ppo_carries_the_pool_through_its_updates(fast_update) -> None:
    from rl_algos.ppo import PPOConfig, PPOHParams
    from rl_algos.ppo.train import make_algorithm as make_ppo

    env = rl_envs.make("pgx/tic_tac_toe", opponent="self")
    config = PPOConfig(total_timesteps=4 * 64, num_envs=8, num_steps=8, num_epochs=1,
                       num_minibatches=2, pool_size=2, pool_every=2, pool_fraction=0.5,
                       fast_update=fast_update)
    algo = make_ppo(env, config)
    hp = PPOHParams()
    carry = algo.init(jax.random.PRNGKey(0), hp)
    update = jax.jit(algo.update)
    for _ in range(4):
        carry, metrics = update(carry, hp)
    assert int(carry.extras.added) == 3
    for mine, kept in zip(jax.tree.leaves(carry.train_state.params),
                          jax.tree.leaves(carry.extras.params), strict=True):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(kept[0]))
    assert np.isfinite(float(metrics["loss/total"]))
    assert float(metrics["pool/games"]) >= 1 and -1 <= float(metrics["pool/score"]) <= 1


def test_ppo_refuses_a_pool_where_it_has_none() -> None:
    from rl_algos.ppo import PPOConfig
    from rl_algos.ppo.train import make_algorithm as make_ppo
    from rl_algos.ppo_rnn.config import PPORNNConfig

    with pytest.raises(ConfigError, match="opponent=self"):
        make_ppo(rl_envs.make("pgx/tic_tac_toe"), PPOConfig(num_envs=8, pool_size=2))
    with pytest.raises(ConfigError, match="ppo_rnn has no self-play snapshot pool"):
        PPORNNConfig(num_envs=8, num_minibatches=2, pool_size=2).validate()
