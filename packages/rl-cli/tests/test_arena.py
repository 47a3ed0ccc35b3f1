"""`rl arena`: round-robin matches between a run's agents and built-in players on a pgx game,
read as a user reads them: every pair once, half the games with each player first, rates with
Wilson intervals, Bradley-Terry ratings anchored on random, arena.json and arena.png; bad input
is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli
from test_eval import _fake_run

pytest.importorskip("pgx")


def test_arena_plays_every_pair_and_rates_the_entrants(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    run = _fake_run(tmp_path / "r")  # two untrained tic_tac_toe agents
    out = tmp_path / "arena"
    code, text, err = run_cli(["arena", str(run), "--opponents", "random,greedy", "--games",
                               "40", "--out", str(out)], capsys)
    assert code == 0, err
    assert max(len(line) for line in text.splitlines()) <= 80, text
    result = json.loads((out / "arena.json").read_text())
    names = ["r/seed_0", "r/seed_1", "random", "greedy"]
    assert result["entrants"] == names and result["anchor"] == "random"
    pairs = [(m["a"], m["b"]) for m in result["matches"]]
    assert pairs == [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    for m in result["matches"]:
        assert m["games"] == 40 and m["a_first"] == 20 and m["unfinished"] == 0
        assert m["wins"] + m["draws"] + m["losses"] == 40
        for k in ("wins", "draws", "losses"):
            low, high = m[f"{k}_ci95"]
            assert 0.0 <= low <= m[k] / 40 <= high <= 1.0
    greedy_vs_random = next(m for m in result["matches"] if m["a"] == "random"
                            and m["b"] == "greedy")
    assert greedy_vs_random["losses"] > greedy_vs_random["wins"]
    ratings = result["ratings"]
    assert ratings["random"] == 0.0 and ratings["greedy"] > 100
    assert (out / "arena.png").stat().st_size > 0
    assert "ratings" in text and "greedy" in text


def test_the_first_named_player_moves_first_in_exactly_half_the_games() -> None:
    """tic_tac_toe between two fixed players: A takes the lowest free cell, B the highest. The
    one that moves first completes its row (A: 0-1-2, B: 8-7-6) on its third move, so A's score
    is +1 exactly in the games the engine says A began, -1 in the others."""
    import jax
    import numpy as np

    import rl_envs

    engine = rl_envs.arena("pgx/tic_tac_toe")
    assert engine.default_players() == ["random", "greedy"]
    assert rl_envs.arena("pgx/othello").default_players() == ["random"]
    low = lambda s, obs, legal, key: jax.numpy.argmax(legal).astype("int32")  # noqa: E731
    high = lambda s, obs, legal, key: (8 - jax.numpy.argmax(legal[::-1])).astype("int32")  # noqa: E731
    res = jax.jit(lambda k: engine.play(low, high, 10, k))(jax.random.PRNGKey(0))
    score, first, finished = (np.asarray(x) for x in res)
    assert finished.all() and first.sum() == 5
    np.testing.assert_array_equal(score, np.where(first, 1.0, -1.0))


def test_random_openings_vary_the_games_and_each_pair_shares_its_opening() -> None:
    """A deterministic player against itself replays one game without openings. With random
    openings the games vary, and the two games of a pair (seats swapped, the same opening) are
    the same game, so their scores are opposite."""
    import jax
    import numpy as np

    import rl_envs

    engine = rl_envs.arena("pgx/tic_tac_toe")
    low = lambda s, obs, legal, key: jax.numpy.argmax(legal).astype("int32")  # noqa: E731
    for opening, varied in ((0, False), (3, True)):
        res = jax.jit(lambda k, o=opening: engine.play(low, low, 40, k, o))(
            jax.random.PRNGKey(0))
        score = np.asarray(res.score)
        np.testing.assert_array_equal(score[0::2], -score[1::2])
        assert (len(set(score[0::2].tolist())) > 1) == varied


@pytest.mark.parametrize("argv, hint", [
    (["--opening-moves", "-1"], "--opening-moves must be a number of random opening moves"),
    (["--games", "7"], "--games must be an even number"),
    (["--opponents", "alphazero"], "a built-in player is one of random, greedy, mcts:N"),
    (["--opponents", "mcts:0"], "'mcts:N' with N a positive number"),
    (["--opponents", "random,random"], "named twice: random"),
    (["--env", "pgx/connect_four"], "one game; these are several"),
])
def test_arena_bad_input_is_one_line(argv: list[str], hint: str, tmp_path: Path,
                                     capsys) -> None:
    run = _fake_run(tmp_path / "r", params=True)
    code, _, err = run_cli(["arena", str(run), *argv, "--out", str(tmp_path / "a")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and hint in lines[0], err
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("argv, hint", [
    ([], "name a game"),
    (["--env", "gymnax/CartPole-v1"], "has none"),
    (["--env", "pgx/backgammon"], "board games without chance"),
    (["--env", "pgx/tic_tac_toe", "--opponents", "random"], "two entrants or more"),
])
def test_arena_without_a_two_player_game_is_one_line(argv: list[str], hint: str,
                                                     capsys) -> None:
    code, _, err = run_cli(["arena", *argv], capsys)
    assert code == 2 and hint in err and err.count("\n") == 1, err


def test_a_planner_trains_from_the_cli_and_enters_the_arena_twice(tmp_path: Path, capsys
                                                                  ) -> None:
    """`rl run --algo alphazero` on tic_tac_toe, then `rl arena`: each member plays once with
    its network alone and once with its search (`+searchN`), both against random."""
    tiny = ["--set", "num_envs=4", "--set", "num_steps=8", "--set", "num_simulations=4",
            "--set", "minibatch_size=16", "--set", "sgd_steps=1", "--set", "eval_envs=2",
            "--set", "hidden_size=16", "--set", "num_layers=1", "--total-timesteps", "64"]
    code, _, err = run_cli(["run", "--algo", "alphazero", "--env", "pgx/tic_tac_toe",
                            "--logdir", str(tmp_path), "--run-name", "az", "--no-progress",
                            "--eval-episodes", "0", *tiny], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "az" / "summary.json").read_text())
    assert summary["algo"] == "alphazero" and summary["total_timesteps"] == 64
    out = tmp_path / "arena"
    code, text, err = run_cli(["arena", str(tmp_path / "az"), "--opponents", "random",
                               "--games", "4", "--search-simulations", "8", "--out", str(out)],
                              capsys)
    assert code == 0, err
    result = json.loads((out / "arena.json").read_text())
    assert result["entrants"] == ["az/seed_0", "az/seed_0+search8", "random"]
    assert all(m["games"] == 4 and m["unfinished"] == 0 for m in result["matches"])


def test_a_self_play_run_is_evaluated_against_the_default_opponent(tmp_path: Path) -> None:
    """In self-play the greedy evaluations of `rl run` play the adapter's default opponent
    (random), not the agent itself."""
    from rl_cli.request import RunRequest, prepare

    prep = prepare(RunRequest(algo="pqn", env="pgx/tic_tac_toe", num_seeds=1, seed=0,
                              total_timesteps=None, sets={}, env_kwargs={"opponent": "self"},
                              logdir=tmp_path, run_name="r", progress=False))
    assert prep.env.self_play
    judge = prep.judge_env()
    assert not getattr(judge, "self_play", False) and judge.opponent == "random"
