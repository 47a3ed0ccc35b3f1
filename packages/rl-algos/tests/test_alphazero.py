"""AlphaZero's parts: the value targets from game outcomes, the planner's environment check, and
the search's targets over legal moves only."""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_algos
import rl_envs
from rl_algos.alphazero.replay import outcome_targets
from rl_algos.common.config import ConfigError


def test_outcome_targets_give_each_mover_its_games_result() -> None:
    # One slot, five moves: players 0, 1, 0 play a game that player 0 wins with move 2; a new
    # game starts (moves 3, 4 by players 1 and 0) and is still going.
    rewards = jnp.zeros((5, 1, 2)).at[2, 0].set(jnp.array([1.0, -1.0]))
    over = jnp.array([[False], [False], [True], [False], [False]])
    mover = jnp.array([[0], [1], [0], [1], [0]])
    value, valid = outcome_targets(rewards, over, mover)
    np.testing.assert_array_equal(np.asarray(value[:, 0]), [1.0, -1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(valid[:, 0]), [True, True, True, False, False])


def test_outcome_targets_do_not_leak_across_games() -> None:
    # Game A (moves 0-1) ends in a draw; game B (moves 2-3) ends with player 1 winning.
    rewards = jnp.zeros((4, 1, 2)).at[3, 0].set(jnp.array([-1.0, 1.0]))
    over = jnp.array([[False], [True], [False], [True]])
    mover = jnp.array([[0], [1], [0], [1]])
    value, valid = outcome_targets(rewards, over, mover)
    np.testing.assert_array_equal(np.asarray(value[:, 0]), [0.0, 0.0, -1.0, 1.0])
    assert bool(valid.all())


@pytest.mark.parametrize("env_id", ["gymnax/CartPole-v1", "pgx/2048"])
def test_a_planner_refuses_an_environment_without_a_game_model(env_id) -> None:
    spec = rl_algos.get("alphazero")
    with pytest.raises(ConfigError, match="plans with the game's rules.*pgx/tic_tac_toe"):
        spec.check_env(rl_envs.make(env_id))


def test_the_game_model_plays_the_environments_game() -> None:
    """The model's moves are pgx's: a game of tic_tac_toe played through it ends, with the
    rewards of a win, a loss or a draw, and its observation is the environment's."""
    env = rl_envs.make("pgx/tic_tac_toe")
    game = env.game_model()
    assert (game.num_players, game.num_actions) == (2, 9)
    assert game.observation_shape == env.observation_space.shape
    state = game.init(jax.random.PRNGKey(0))
    for i in range(9):
        view = game.view(state)
        if bool(view.over):
            break
        action = jnp.argmax(view.legal)
        state = game.step(state, action, jax.random.PRNGKey(i))
    view = game.view(state)
    assert bool(view.over)
    assert float(view.rewards.sum()) == 0.0 and set(np.asarray(view.rewards)) <= {-1.0, 0.0, 1.0}


def test_search_targets_are_on_legal_moves_and_greedy_acting_is_legal() -> None:
    spec = rl_algos.get("alphazero")
    env = rl_envs.make("pgx/tic_tac_toe")
    config = dataclasses.replace(spec.config_cls(), num_envs=4, num_steps=8, num_simulations=8,
                                 minibatch_size=16, sgd_steps=1, eval_envs=2)
    algo = spec.make_algorithm(env, config)
    hp = spec.default_hparams()
    update = jax.jit(algo.update)
    carry, metrics = update(jax.jit(algo.init)(jax.random.PRNGKey(0), hp), hp)
    # The first update's moves wait for the next update's to get their targets.
    assert not np.asarray(carry.extras.replay.valid).any()
    assert float(metrics["selfplay_games"]) >= 1.0  # 8 moves of tic_tac_toe end some games
    carry, _ = update(carry, hp)
    replay = carry.extras.replay
    filled = np.asarray(replay.legal).any(axis=1)
    assert filled.sum() == 4 * 8
    # Every game ends within 9 moves, so each of the first update's positions has its target.
    assert np.asarray(replay.valid)[filled].all()
    policy = np.asarray(replay.policy)[filled]
    legal = np.asarray(replay.legal)[filled]
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(policy[~legal] == 0.0)
    assert set(np.unique(np.asarray(replay.value)[filled])) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("mix", [0.0, 0.5, 1.0])
def test_value_targets_mix_the_outcome_with_the_searchs_root_value(mix) -> None:
    spec = rl_algos.get("alphazero")
    env = rl_envs.make("pgx/tic_tac_toe")
    config = dataclasses.replace(spec.config_cls(), num_envs=4, num_steps=9, num_simulations=8,
                                 minibatch_size=16, sgd_steps=1, eval_envs=2)
    algo = spec.make_algorithm(env, config)
    hp = spec.default_hparams()._replace(value_mix=jnp.float32(mix))
    update = jax.jit(algo.update)
    carry, _ = update(jax.jit(algo.init)(jax.random.PRNGKey(0), hp), hp)
    first = carry.extras.pending  # the first update's moves, [9, 4]
    carry, _ = update(carry, hp)
    both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), first, carry.extras.pending)
    outcome = np.asarray(outcome_targets(both.rewards, both.over, both.mover)[0][:9])
    searched = np.asarray(first.searched)
    assert np.all(np.abs(searched) <= 1.0) and len(np.unique(searched)) > 3
    # The second update wrote the first update's 36 positions into the replay's second block.
    replay = carry.extras.replay
    np.testing.assert_allclose(np.asarray(replay.value[36:72]),
                               ((1 - mix) * outcome + mix * searched).reshape(-1), atol=1e-6)
    assert np.asarray(replay.valid[36:72]).all()


def test_value_mix_outside_the_unit_interval_is_refused() -> None:
    hp = rl_algos.get("alphazero").hparams_cls(value_mix=1.5)
    with pytest.raises(ConfigError, match=r"value_mix must be in \[0, 1\]"):
        hp.validate()


def test_opening_moves_count_each_games_moves() -> None:
    from rl_algos.common.spec import game_model

    spec = rl_algos.get("alphazero")
    env = rl_envs.make("pgx/tic_tac_toe")
    game = game_model(env, "alphazero")
    config = dataclasses.replace(spec.config_cls(), num_envs=8, num_steps=7, num_simulations=8,
                                 minibatch_size=16, sgd_steps=1, eval_envs=2, opening_moves=4)
    hp = spec.default_hparams()
    algo = spec.make_algorithm(env, config)
    carry = jax.jit(algo.init)(jax.random.PRNGKey(0), hp)
    update = jax.jit(algo.update)
    for _ in range(2):  # 14 moves: every game ended once, some twice
        carry, _ = update(carry, hp)
        # A running tic_tac_toe game with k moves played has 9 - k legal moves.
        legal = np.asarray(jax.vmap(game.view)(carry.extras.games).legal).sum(axis=1)
        np.testing.assert_array_equal(np.asarray(carry.extras.played), 9 - legal)


@pytest.mark.parametrize("members", [None, 2])
def test_the_batched_search_builds_the_tree_mctx_builds(members) -> None:
    """`alphazero.search` is `mctx.gumbel_muzero_policy` with the backup over the whole batch:
    from the same roots and key it builds the same tree, node for node (values to float32
    rounding: XLA may fuse a multiply-add in one program and not in the other), and makes the
    same choices, alone and under `vmap` (members trained at once), where its backup runs its
    own batching rule. The search is `make_search`'s (the game as the model, an untrained
    network), once with mctx's policy; the roots are tic_tac_toe games after 0-6 random moves,
    so searches meet won, lost and drawn ends (discount 0) and both movers' views (discount
    -1)."""
    import equinox as eqx
    import mctx

    from rl_algos.alphazero.train import make_search, network_model
    from rl_algos.common.spec import game_model

    env = rl_envs.make("pgx/tic_tac_toe")
    game = game_model(env, "alphazero")
    n = 12
    config = dataclasses.replace(rl_algos.get("alphazero").config_cls(), hidden_size=16,
                                 num_simulations=24)
    params, static = eqx.partition(network_model(env, config)(jax.random.PRNGKey(7)),
                                   eqx.is_array)

    def opened(key: jax.Array, moves: jax.Array):
        def move(i, s):
            v = game.view(s)
            a = jax.random.categorical(jax.random.fold_in(key, i), jnp.where(v.legal, 0.0, -1e9))
            return jax.tree.map(lambda x, y: jnp.where(i < moves, x, y), game.step(s, a, key), s)
        return jax.lax.fori_loop(0, 6, move, game.init(key))

    roots = jax.vmap(opened)(jax.random.split(jax.random.PRNGKey(1), n), jnp.arange(n) % 7)

    def search(policy, states, key):
        return make_search(game, static, config, 1.0, policy=policy)(params, states, key)[1]

    keys = jax.random.PRNGKey(3)
    if members:
        roots = jax.tree.map(lambda x: x.reshape(members, n // members, *x.shape[1:]), roots)
        keys = jax.random.split(keys, members)
    run = (lambda p: jax.jit(jax.vmap(partial(search, p)))) if members else (
        lambda p: jax.jit(partial(search, p)))
    want = run(mctx.gumbel_muzero_policy)(roots, keys)
    got = run(None)(roots, keys)  # make_search's own: alphazero.search.gumbel_muzero_policy
    assert int(np.asarray(want.search_tree.node_visits)[..., 0].min()) == (
        config.num_simulations + 1)
    for name in ("node_visits", "children_visits", "children_index", "parents",
                 "action_from_parent"):
        np.testing.assert_array_equal(np.asarray(getattr(got.search_tree, name)),
                                      np.asarray(getattr(want.search_tree, name)), err_msg=name)
    for name in ("node_values", "children_values", "raw_values"):
        np.testing.assert_allclose(np.asarray(getattr(got.search_tree, name)),
                                   np.asarray(getattr(want.search_tree, name)), rtol=1e-6,
                                   atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(np.asarray(got.action), np.asarray(want.action))
    np.testing.assert_allclose(np.asarray(got.action_weights), np.asarray(want.action_weights),
                               rtol=1e-5, atol=1e-7)


def test_the_backups_vmap_rule_matches_one_batch_at_a_time() -> None:
    """The backup's batching rule (vmap folded into the games' axis) gives what the backup gives
    each vmapped batch alone: with some inputs unbatched (broadcast) and under two vmaps."""
    from rl_algos.alphazero.search import _backup

    m, b, n, a = 3, 4, 6, 3  # members, games, nodes, actions
    # One tree shape for every game: a chain 0 <- 1 <- 2 <- 3 (actions 0, 1, 2), node 4 under the
    # root (action 2) and node 5 under node 1 (action 0); leaves at every depth, the root too.
    parents = jnp.broadcast_to(jnp.array([-1, 0, 1, 2, 0, 1]), (b, n))
    action_from_parent = jnp.broadcast_to(jnp.array([-1, 0, 1, 2, 2, 0]), (b, n))
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    node_values = jax.random.normal(keys[0], (m, b, n))
    node_visits = jax.random.randint(keys[1], (m, b, n), 1, 5)
    children_values = jax.random.normal(keys[2], (m, b, n, a))
    children_visits = jax.random.randint(keys[3], (m, b, n, a), 0, 4)
    rewards = jax.random.normal(keys[4], (b, n, a))  # unbatched over members
    discounts = jnp.where(jnp.arange(a) == 1, 0.0, -1.0) * jnp.ones((b, n, a))
    leaf = jnp.array([[3, 5, 4, 0], [2, 3, 1, 5], [0, 0, 3, 4]], jnp.int32)
    batched = (True, True, True, True, False, False, False, False, True)
    args = (node_values, node_visits, children_values, children_visits, parents,
            action_from_parent, rewards, discounts, leaf)
    want = [jax.jit(_backup)(*(x[i] if on else x for x, on in zip(args, batched, strict=True)))
            for i in range(m)]
    got = jax.jit(jax.vmap(_backup, in_axes=tuple(0 if on else None for on in batched)))(*args)
    # Two vmaps: members split into 1 x 3 and (for the shared inputs) broadcast.
    nested = jax.jit(jax.vmap(jax.vmap(_backup, in_axes=tuple(0 if on else None
                                                             for on in batched)),
                              in_axes=tuple(0 if on else None for on in batched)))(
        *(x[None] if on else x for x, on in zip(args, batched, strict=True)))
    for k in range(4):
        for i in range(m):
            np.testing.assert_array_equal(np.asarray(got[k][i]), np.asarray(want[i][k]))
            np.testing.assert_array_equal(np.asarray(nested[k][0, i]), np.asarray(want[i][k]))
    # The backup changed what it should: the leaf's parent gained a visit wherever a leaf is
    # below the root, and a game whose leaf is the root is untouched.
    visits = np.asarray(got[1])
    assert (visits[0, 0] == np.asarray(node_visits)[0, 0] + np.array([1, 1, 1, 0, 0, 0])).all()
    assert (visits[2, 0] == np.asarray(node_visits)[2, 0]).all()


def test_mirrored_positions_flip_the_board_its_moves_and_its_target() -> None:
    """connect_four's mirror image reverses the columns of the board, of the legal moves and of
    the policy target; the positions not drawn for a flip and the values are untouched."""
    from rl_algos.alphazero.replay import Replay, mirrored

    game = rl_envs.make("pgx/connect_four").game_model()
    k_obs, k_pol = jax.random.split(jax.random.PRNGKey(0))
    obs = jax.random.bernoulli(k_obs, 0.3, (4, 6, 7, 2)).astype(jnp.float32)
    legal = jnp.array([[True] * 6 + [False]] * 4)
    policy = jnp.where(legal, jax.random.uniform(k_pol, (4, 7)), 0.0)
    mb = Replay(obs, legal, policy, jnp.arange(4.0), jnp.ones(4, jnp.bool_))
    out = mirrored(game.reflect, mb, jnp.array([True, False, True, False]))
    for i, flipped in enumerate([True, False, True, False]):
        want = (lambda x, a: np.flip(np.asarray(x), a)) if flipped else (
            lambda x, a: np.asarray(x))
        np.testing.assert_array_equal(np.asarray(out.observation[i]), want(obs[i], 1))
        np.testing.assert_array_equal(np.asarray(out.legal[i]), want(legal[i], 0))
        np.testing.assert_array_equal(np.asarray(out.policy[i]), want(policy[i], 0))
    np.testing.assert_array_equal(np.asarray(out.value), np.arange(4.0))
    # The mirrored target stays on the mirrored legal moves.
    assert not np.asarray(out.policy)[~np.asarray(out.legal)].any()


def test_reflect_trains_and_a_game_without_a_symmetry_is_refused() -> None:
    spec = rl_algos.get("alphazero")
    config = dataclasses.replace(spec.config_cls(), num_envs=4, num_steps=8, num_simulations=8,
                                 minibatch_size=16, sgd_steps=2, eval_envs=2, reflect=True)
    with pytest.raises(ConfigError, match="no left-right symmetry.*drop --set reflect=true"):
        spec.make_algorithm(rl_envs.make("pgx/othello"), config)
    algo = spec.make_algorithm(rl_envs.make("pgx/tic_tac_toe"), config)
    hp = spec.default_hparams()
    update = jax.jit(algo.update)
    carry = jax.jit(algo.init)(jax.random.PRNGKey(0), hp)
    for _ in range(3):
        carry, metrics = update(carry, hp)
    assert np.isfinite(float(metrics["policy_loss"])) and float(metrics["policy_loss"]) > 0.0


def test_the_planner_vmapped_over_games_plays_each_games_own_move() -> None:
    """`make_planner`'s batching rule (one search over a match's games) chooses, in every game,
    the move the planner chooses in that game alone; with several agents (their parameters
    batched) each game is searched by its own."""
    import equinox as eqx

    from rl_algos.alphazero.train import make_planner, network_model
    from rl_core import Agent

    spec = rl_algos.get("alphazero")
    env = rl_envs.make("pgx/connect_four")
    config = dataclasses.replace(spec.config_cls(), num_simulations=16)
    plan = make_planner(env, config)
    game = env.game_model()

    def agent(k):
        return Agent(eqx.filter(network_model(env, config)(k), eqx.is_array))

    # 8 positions, game i opened by i random moves.
    def opened(k, moves):
        s = game.init(k)
        for i in range(moves):
            legal = np.flatnonzero(np.asarray(game.view(s).legal))
            s = game.step(s, jnp.int32(legal[(3 * i + moves) % len(legal)]), k)
        return s

    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    states = [opened(k, i) for i, k in enumerate(keys)]
    batch = jax.tree.map(lambda *x: jnp.stack(x), *states)
    one = agent(jax.random.PRNGKey(0))
    alone = [int(jax.jit(plan)(one, s, k)) for s, k in zip(states, keys, strict=True)]
    together = jax.jit(jax.vmap(plan, in_axes=(None, 0, 0)))(one, batch, keys)
    assert np.asarray(together).tolist() == alone
    assert len(set(alone)) > 1  # the positions differ, and so do the moves
    # Two agents, each its own games.
    two = jax.tree.map(lambda a, b: jnp.stack([a, b] * 4),
                       one, agent(jax.random.PRNGKey(5)))
    each = jax.jit(jax.vmap(plan))(two, batch, keys)
    other = agent(jax.random.PRNGKey(5))
    want = [int(jax.jit(plan)(one if i % 2 == 0 else other, s, k))
            for i, (s, k) in enumerate(zip(states, keys, strict=True))]
    assert np.asarray(each).tolist() == want
