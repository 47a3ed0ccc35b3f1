"""`rl eval`: a run directory's agents play whole episodes: pgx games against an opponent (here
two untrained PQN members written as `rl run` writes them), any backend for every algorithm
(trained briefly by `rl run`), and every bad input ends in one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import pytest
from cli_helpers import run_cli

from rl_algos.common.qnetwork import QNetwork
from rl_algos.pqn import PQNConfig
from rl_cli.overrides import as_jsonable

CONFIG = PQNConfig(hidden_size=16, num_layers=1, cnn_channels=0)


def _fake_run(path: Path, env: str = "pgx/tic_tac_toe", params: bool = True) -> Path:
    """A run directory as `rl run` leaves it: config.json and two members' parameters."""
    path.mkdir(parents=True)
    record = {"algo": "pqn", "env": env, "env_kwargs": {}, "seeds": [0, 1],
              "config": as_jsonable(CONFIG)}
    (path / "config.json").write_text(json.dumps(record))
    if params:
        members = [eqx.filter(QNetwork(jax.random.PRNGKey(s), (3, 3, 2), 9, 16, 1, 0),
                              eqx.is_array) for s in (0, 1)]
        eqx.tree_serialise_leaves(path / "params.eqx",
                                  jax.tree.map(lambda *x: np.stack(x), *members))
    return path



def test_eval_plays_every_game_to_the_end(tmp_path: Path, capsys) -> None:
    run = _fake_run(tmp_path / "r")
    code, out, err = run_cli(["eval", str(run), "--games", "300", "--opponent", "greedy"],
                             capsys)
    assert code == 0, err
    assert "seed_0" in out and "seed_1" in out and "vs greedy" in out
    res = json.loads((run / "eval-greedy-vs-greedy.json").read_text())
    assert res["episodes"] == 300 and res["members"] == ["seed_0", "seed_1"]
    win, draw, loss = (np.array(res[k]) for k in ("win_rate", "draw_rate", "loss_rate"))
    np.testing.assert_allclose(win + draw + loss, 1.0)
    assert res["unfinished"] == [0, 0]
    # tic-tac-toe pays +1 / -1 / 0: the mean return is the win rate minus the loss rate
    np.testing.assert_allclose(res["mean_return"], win - loss, atol=1e-6)
    # an untrained agent loses most games to the one-move look-ahead opponent
    assert np.all(loss > 0.5), loss


def test_eval_against_the_search_opponent(tmp_path: Path, capsys) -> None:
    """`--opponent mcts:N` plays whole games against the search player and says so."""
    run = _fake_run(tmp_path / "r")
    code, out, err = run_cli(["eval", str(run), "--games", "16", "--opponent", "mcts:8"],
                             capsys)
    assert code == 0, err
    assert "vs mcts:8" in out
    res = json.loads((run / "eval-greedy-vs-mcts-8.json").read_text())
    assert res["opponent"] == "mcts:8" and res["episodes"] == 16
    assert res["unfinished"] == [0, 0]


@pytest.mark.parametrize("case, argv_tail, hint", [
    ("missing", [], "does not exist"),
    ("no_params", [], "has no params.eqx"),
    ("gymnax", ["--opponent", "random"], "--opponent is for two-player games"),
    ("ok", ["--games", "0"], "--episodes must be between 1 and"),
    ("ok", ["--env", "pgx/connect_four"], "other spaces"),
    ("ok", ["--env", "pgx/othello", "--opponent", "greedy"], "greedy opponent exists for"),
    ("ok", ["--opponent", "mcts:0"], "'mcts:N' with N a positive number"),
    ("ok", ["--opponent", "mcts:abc"], "'mcts:N' with N a positive number"),
])
def test_eval_bad_input_is_one_line(case: str, argv_tail: list[str], hint: str,
                                    tmp_path: Path, capsys) -> None:
    run = tmp_path / case
    if case == "no_params":
        _fake_run(run, params=False)
    elif case == "gymnax":
        _fake_run(run, env="gymnax/CartPole-v1")
    elif case == "ok":
        _fake_run(run)
    code, out, err = run_cli(["eval", str(run), *argv_tail], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and hint in lines[0], err
    assert not list(tmp_path.rglob("eval-*.json"))


@pytest.mark.parametrize("env, env_kwargs, expected", [
    ("pgx/connect_four", {}, {"opponent": "mixed"}),  # the preset's environment default
    ("pgx/connect_four", {"opponent": "random"}, {"opponent": "random"}),  # the user's wins
    ("pgx/othello", {}, {}),  # no greedy player for othello: the game's own default
])
def test_pqn_board_game_preset_sets_the_training_opponent(env, env_kwargs, expected) -> None:
    from rl_cli.request import RunRequest, prepare

    prep = prepare(RunRequest(algo="pqn", env=env, env_kwargs=env_kwargs))
    assert prep.preset == "board_game" and prep.env_kwargs == expected
    assert prep.env.opponent == expected.get("opponent", "random")


@pytest.mark.parametrize("algo, env, sets", [
    ("ppo", "gymnax/CartPole-v1", []),
    ("ppo", "gymnax/Pendulum-v1", ["--set", "num_envs=4", "--set", "num_steps=64",
                                   "--set", "num_minibatches=4"]),  # normalised observations
    ("vpg", "gymnax/CartPole-v1", []),
    # a policy with memory, on CartPole without velocities (the masking is rebuilt from the run)
    pytest.param("ppo_rnn", "gymnax/CartPole-v1", ["--env-arg", "obs_keep=0,2"],
                 marks=pytest.mark.heavy),
    ("pqn", "gymnax/CartPole-v1", []),
    pytest.param("td3", "gymnax/Pendulum-v1", ["--set", "learning_starts=256"],
                 marks=pytest.mark.heavy),  # the two slowest of these in the heavy tier
    ("qlearning", "native/GridWorld", []),
])
def test_eval_every_algorithm_after_rl_run(algo, env, sets, tmp_path: Path, capsys) -> None:
    """`rl run` for a few updates, then `rl eval`: a row per member with finite returns of
    finished episodes, greedy by default and sampling with --stochastic, the JSON written."""
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", algo, "--env", env,
                            "--num-seeds", "2", "--total-timesteps", "2048", *sets,
                            "--logdir", str(tmp_path), "--run-name", "r", "--no-progress",
                            "--eval-episodes", "0"], capsys)
    assert code == 0, err
    for extra, name in (([], "eval-greedy.json"), (["--stochastic"], "eval-stochastic.json")):
        code, out, err = run_cli(["--no-compile-cache", "eval", str(tmp_path / "r"),
                                  "--episodes", "8", *extra], capsys)
        assert code == 0, err
        assert "seed_0" in out and "seed_1" in out and "95% CI" in out
        res = json.loads((tmp_path / "r" / name).read_text())
        assert res["episodes"] == 8 and res["unfinished"] == [0, 0]
        returns = np.array(res["returns"], dtype=float)
        assert returns.shape == (2, 8) and np.all(np.isfinite(returns))
        np.testing.assert_allclose(res["mean_return"], returns.mean(axis=1), rtol=1e-6)
