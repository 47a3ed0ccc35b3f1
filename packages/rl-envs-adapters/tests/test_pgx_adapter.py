"""The pgx backend: the port's contract (a cheap subset by default, every game under `-m slow`),
seats and points of view, rewards from the agent's side, truncation by `max_moves`, illegal moves,
the greedy opponent's look-ahead checked against pgx itself, and refused options."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset, EpisodeStatistics, VectorEnv, check_environment
from rl_envs import EnvError
from rl_envs.pgx_adapter import ENV_NAMES, winning_moves

pgx = pytest.importorskip("pgx")

FAST = ["pgx/tic_tac_toe", "pgx/connect_four", "pgx/kuhn_poker"]
ALL_IDS = rl_envs.list_envs("pgx")


def test_every_pgx_game_is_registered() -> None:
    # bridge_bidding is not in available_envs (pgx.make refuses it); every other game is here.
    assert set(ENV_NAMES) == set(pgx.available_envs())
    assert len(ALL_IDS) == len(pgx.available_envs()) >= 19


@pytest.mark.parametrize("env_id", FAST)
def test_check_environment(env_id: str) -> None:
    check_environment(rl_envs.make(env_id))


def test_check_environment_against_the_greedy_opponent() -> None:
    check_environment(rl_envs.make("pgx/tic_tac_toe", opponent="greedy"))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_environment_every_game(env_id: str) -> None:
    check_environment(rl_envs.make(env_id))


# --- seats, views, rewards -------------------------------------------------------------------

LINES = [[(r, c) for c in range(3)] for r in range(3)] + [
    [(r, c) for r in range(3)] for c in range(3)] + [
    [(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]


def _ttt_line(plane: np.ndarray) -> bool:
    return any(all(plane[r, c] for r, c in line) for line in LINES)


def test_tic_tac_toe_seats_views_and_rewards_from_the_agents_side() -> None:
    """Random agent moves against the 50/50 mixed opponent, 256 games at a time: checked against
    an independent tic-tac-toe oracle on the agent's planes."""
    env = rl_envs.make("pgx/tic_tac_toe", opponent="mixed", greedy_prob=0.5)
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), 256)

    @jax.jit
    def run(key):
        state, ts = venv.reset(key)

        def body(c, k):
            state, ts = c
            k_a, k_s = jax.random.split(k)
            a = jax.vmap(env.action_space.sample)(jax.random.split(k_a, 256),
                                                  ts.info["action_mask"])
            greedy = state.env_state.greedy  # this game's opponent (before a reset)
            state, nts = venv.step(state, a, k_s)
            return (state, nts), (ts.observation, nts, greedy)

        _, out = jax.lax.scan(body, (state, ts), jax.random.split(key, 40))
        return ts, out

    ts0, (obs_before, tss, greedy) = run(jax.random.PRNGKey(0))
    # Seats: the agent moves first in about half of the games (an empty board at reset), else
    # it faces exactly one opponent mark.
    stones0 = np.asarray(ts0.observation).sum(axis=(1, 2))  # [256, 2]: own, opponent
    assert np.all(stones0[:, 0] == 0) and set(np.unique(stones0[:, 1])) == {0, 1}
    assert 0.35 < np.mean(stones0[:, 1] == 0) < 0.65
    # On the agent's turn it has as many marks as the opponent, or one fewer.
    counts = np.asarray(obs_before).sum(axis=(2, 3))  # [T, 256, 2]
    assert np.all((counts[..., 1] - counts[..., 0] >= 0) & (counts[..., 1] - counts[..., 0] <= 1))
    final = np.asarray(tss.info["final_observation"])
    term, rew = np.asarray(tss.terminated), np.asarray(tss.reward)
    assert not np.any(np.asarray(tss.truncated))
    assert term.sum() > 1000
    for t, i in zip(*np.nonzero(term), strict=True):
        own, opp = final[t, i, ..., 0], final[t, i, ..., 1]
        expected = 1.0 if _ttt_line(own) else -1.0 if _ttt_line(opp) else 0.0
        assert rew[t, i] == expected, (t, i, own, opp)
        if expected == 0.0:
            assert own.sum() + opp.sum() == 9  # a draw only on a full board
    # The mask at every live step is the board's empty cells.
    mask = np.asarray(tss.info["action_mask"])
    empty = np.asarray(tss.observation).sum(axis=-1) == 0
    np.testing.assert_array_equal(mask, empty.reshape(*empty.shape[:2], 9))
    # The greedy opponent beats a random agent far more often than the random opponent does.
    g = np.asarray(greedy)[term]
    losses = rew[term] < 0
    assert losses[g].mean() > losses[~g].mean() + 0.2, (losses[g].mean(), losses[~g].mean())


def test_max_moves_truncates_and_illegal_moves_lose() -> None:
    env = rl_envs.make("pgx/connect_four", max_moves=2)
    step = jax.jit(env.step)
    state, ts = jax.jit(env.reset)(jax.random.PRNGKey(0))
    for i in range(2):  # no game of connect four ends within two moves of the agent
        state, ts = step(state, jnp.int32(3), jax.random.PRNGKey(i))
        assert not bool(ts.terminated)
        assert bool(ts.truncated) == (i == 1)
    # tic_tac_toe: an agent in the second seat meets one opponent mark; playing there is illegal.
    env = rl_envs.make("pgx/tic_tac_toe")
    reset = jax.jit(env.reset)
    for seed in range(20):
        state, ts = reset(jax.random.PRNGKey(seed))
        if int(state.agent) == 1:
            break
    taken = int(np.argmin(np.asarray(ts.info["action_mask"])))
    state, ts = jax.jit(env.step)(state, jnp.int32(taken), jax.random.PRNGKey(1))
    assert bool(ts.terminated) and float(ts.reward) == -1.0


# --- the greedy opponent's look-ahead --------------------------------------------------------


@pytest.mark.parametrize("game", ["tic_tac_toe", "connect_four"])
def test_winning_moves_agree_with_pgx(game: str) -> None:
    """On positions from random play, a move is 'winning' exactly when pgx ends the game with +1
    for the mover; the same check from the other side finds the moves to block."""
    env = pgx.make(game)
    n, depth = 64, 12 if game == "connect_four" else 6

    @jax.jit
    def positions(key):
        def body(s, k):
            k_a, k_s = jax.random.split(k)
            a = jax.vmap(lambda m, kk: jax.random.categorical(kk, jnp.where(m, 0.0, -jnp.inf)))(
                s.legal_action_mask, jax.random.split(k_a, n))
            nxt = jax.vmap(env.step)(s, a, jax.random.split(k_s, n))
            keep = nxt.terminated  # stay on the last live position
            s = jax.tree.map(lambda x, y: jnp.where(
                keep.reshape(-1, *[1] * (x.ndim - 1)), x, y), s, nxt)
            return s, s
        s0 = jax.vmap(env.init)(jax.random.split(key, n))
        return jax.lax.scan(body, s0, jax.random.split(key, depth))[1]

    @jax.jit
    def check(s):
        num_actions = s.legal_action_mask.shape[-1]
        after = jax.vmap(lambda a: env.step(s, a))(jnp.arange(num_actions))
        truth = after.terminated & (after.rewards[:, s.current_player] > 0) & s.legal_action_mask
        obs = s.observation.astype(jnp.bool_)
        mine = winning_moves(game, obs[..., 0], obs[..., 1], s.legal_action_mask)
        theirs = winning_moves(game, obs[..., 1], obs[..., 0], s.legal_action_mask)
        return truth, mine, theirs

    states = positions(jax.random.PRNGKey(3))
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    truth, mine, theirs = jax.vmap(check)(flat)
    np.testing.assert_array_equal(np.asarray(mine), np.asarray(truth))
    assert np.asarray(truth).sum() > 20 and np.asarray(theirs).sum() > 20


# --- refused options -------------------------------------------------------------------------


@pytest.mark.parametrize("env_id, kwargs, words", [
    ("pgx/connect_four", {"opponent": "minimax"}, "opponent must be one of"),
    ("pgx/othello", {"opponent": "greedy"}, "greedy opponent exists for"),
    ("pgx/2048", {"opponent": "greedy"}, "single-player"),
    ("pgx/tic_tac_toe", {"max_moves": 0}, "max_moves must be a positive integer"),
    ("pgx/tic_tac_toe", {"opponent": "mixed", "greedy_prob": 2}, "greedy_prob"),
    ("pgx/connect_four", {"opponent": "mcts:0"}, "'mcts:N' with N a positive number"),
    ("pgx/connect_four", {"opponent": "mcts:abc"}, "'mcts:N' with N a positive number"),
    ("pgx/connect_four", {"opponent": "mcts"}, "'mcts:N' with N a positive number"),
    ("pgx/backgammon", {"opponent": "mcts:8"}, "board games without chance"),
    ("pgx/kuhn_poker", {"opponent": "mcts:8"}, "board games without chance"),
    ("pgx/2048", {"opponent": "mcts:8"}, "single-player"),
])
def test_bad_options_are_refused_with_the_fix(env_id: str, kwargs: dict, words: str) -> None:
    with pytest.raises(EnvError, match=words):
        rl_envs.make(env_id, **kwargs)


def test_single_player_games_have_one_seat() -> None:
    env = rl_envs.make("pgx/minatar-breakout")
    assert env.num_players == 1 and env.family == "minatar"


@pytest.mark.slow
def test_sparrow_mahjong_reset_never_returns_a_finished_game() -> None:
    # ~1.7% of raw deals end (an opponent's win) before the agent's first move: reset deals again.
    env = rl_envs.make("pgx/sparrow_mahjong")
    state, ts = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(0), 4000))
    assert not np.any(np.asarray(ts.terminated))
    np.testing.assert_array_equal(state.game.current_player, state.agent)
    assert np.all(np.bincount(np.asarray(state.agent)) > 1200)  # three seats, ~1333 each


def test_self_play_alternates_views_and_rewards_the_mover() -> None:
    """opponent='self': each step is one move by the player to move; the observation is the
    next mover's own planes, turn_sign -1 at every hand-over, and the winning move pays its
    mover +1 (tic_tac_toe: X takes 0, 1, 2 while O takes 3, 4)."""
    env = rl_envs.make("pgx/tic_tac_toe", opponent="self")
    assert env.self_play
    check_environment(env)
    state, ts = env.reset(jax.random.PRNGKey(0))
    assert float(ts.info["turn_sign"]) == 1.0
    opener = int(ts.info["player"])
    for i, cell in enumerate([0, 3, 1, 4, 2]):
        assert int(ts.info["player"]) == (opener + i) % 2  # the player to move
        before = int(ts.observation[..., 0].sum() + ts.observation[..., 1].sum())
        assert before == i  # both players' stones, seen by the mover
        state, ts = env.step(state, jnp.int32(cell), jax.random.PRNGKey(i))
        assert float(ts.info["turn_sign"]) == -1.0
        if i < 4:
            assert float(ts.reward) == 0.0 and not bool(ts.terminated)
            # plane 0 holds the next mover's own stones: (i + 1) // 2 of them
            mine = int(ts.observation[..., 0].sum())
            assert mine == (i + 1) // 2
    assert bool(ts.terminated) and float(ts.reward) == 1.0


def test_self_play_names_the_player_to_move_across_new_games() -> None:
    """`info["player"]` follows the reset when `AutoReset` starts a new game (whose opener pgx
    draws anew), so a learner that gives a seat to another policy hands it the right moves."""
    from rl_core import AutoReset

    env = AutoReset(rl_envs.make("pgx/tic_tac_toe", opponent="self"))
    state, ts = env.reset(jax.random.PRNGKey(1))
    step = jax.jit(env.step)
    rng = np.random.default_rng(0)
    games = 0
    for i in range(60):  # random legal moves: about ten games
        action = rng.choice(np.flatnonzero(np.asarray(ts.info["action_mask"])))
        state, ts = step(state, jnp.int32(action), jax.random.PRNGKey(100 + i))
        games += int(ts.terminated)
        assert int(ts.info["player"]) == int(state.game.current_player)
    assert games >= 5


def test_self_play_is_for_two_player_games_without_chance() -> None:
    with pytest.raises(EnvError, match="self-play"):
        rl_envs.make("pgx/backgammon", opponent="self")
    from rl_envs.pgx_adapter import PgxEnv

    with pytest.raises(EnvError, match="rl_envs.make"):  # not a mixed opponent by mistake
        PgxEnv("tic_tac_toe", opponent="self")
