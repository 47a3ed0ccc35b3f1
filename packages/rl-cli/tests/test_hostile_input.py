"""Hostile input, table-driven: every case is a command line that must end with a non-zero exit,
no traceback, exactly one stderr line `rl: error: ...` naming what is wrong (the case's hint), and
nothing written (the temporary directory holds the same files before and after). Every refusal
happens before anything compiles, so the table runs in seconds.

`CASES` is also the source of the table in docs/errors.md: running this file as a script
(`uv run python packages/rl-cli/tests/test_hostile_input.py`) regenerates it, and
`test_errors_doc_lists_every_case` fails when the file and the table disagree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import equinox as eqx
import jax
import numpy as np
import pytest
from cli_helpers import run_cli

from rl_algos.common.qnetwork import QNetwork
from rl_algos.pqn import PQNConfig
from rl_cli.main import main
from rl_cli.overrides import as_jsonable

REPO = Path(__file__).resolve().parents[3]
ERRORS_DOC = REPO / "docs" / "errors.md"
CART = ["--env", "gymnax/CartPole-v1"]
PQN_CONFIG = PQNConfig(hidden_size=16, num_layers=1, cnn_channels=0)


class Case(NamedTuple):
    argv: list[str]  # `{logdir}`, `{file}`, `{run}`, `{tmp}` are filled in per test
    hint: str  # a substring of the one error line
    setup: str | None = None  # a key of SETUPS
    code: int = 2


# --------------------------------------------------------------------------- setups


def _file(tmp: Path) -> None:
    (tmp / "file").write_text("not a directory\n")


def _fake_run(tmp: Path, record: dict | str | None = None, params: str = "ok",
              env: str = "pgx/tic_tac_toe") -> None:
    """`tmp/run` as `rl run` leaves it (two untrained PQN members), optionally spoilt."""
    run = tmp / "run"
    run.mkdir()
    if record is None:
        record = {"algo": "pqn", "env": env, "env_kwargs": {}, "seeds": [0, 1],
                  "config": as_jsonable(PQN_CONFIG)}
    (run / "config.json").write_text(record if isinstance(record, str) else json.dumps(record))
    if params == "missing":
        return
    members = [eqx.filter(QNetwork(jax.random.PRNGKey(s), (3, 3, 2), 9, 16, 1, 0), eqx.is_array)
               for s in (0, 1)]
    eqx.tree_serialise_leaves(run / "params.eqx", jax.tree.map(lambda *x: np.stack(x), *members))
    data = (run / "params.eqx").read_bytes()
    if params == "truncated":
        (run / "params.eqx").write_bytes(data[: len(data) // 2])
    elif params == "garbage":
        (run / "params.eqx").write_bytes(b"\x00garbage" * 10)
    elif params == "empty":
        (run / "params.eqx").write_bytes(b"")


def _good_record(**changes: object) -> dict:
    record = {"algo": "pqn", "env": "pgx/tic_tac_toe", "env_kwargs": {}, "seeds": [0, 1],
              "config": as_jsonable(PQN_CONFIG)}
    record.update(changes)
    return record


def _stopped_run(tmp: Path, checkpoint: bytes | None = None) -> None:
    """`tmp/run` as an `rl run` killed before its first checkpoint leaves it (config.json with
    the request), optionally with a damaged checkpoint file."""
    from rl_cli.request import RunRequest, request_record

    run = tmp / "run"
    (run / "checkpoints").mkdir(parents=True)
    req = RunRequest(algo="ppo", env="gymnax/CartPole-v1", total_timesteps=2048, logdir=tmp,
                     run_name="run")
    (run / "config.json").write_text(json.dumps({"algo": "ppo", "env": "gymnax/CartPole-v1",
                                                 "request": request_record(req, 1)}))
    if checkpoint is not None:
        (run / "checkpoints" / "updates-000000002.ckpt").write_bytes(checkpoint)


def _toml(tmp: Path, text: str) -> None:
    (tmp / "run.toml").write_text(text)


SETUPS: dict[str, Callable[[Path], None]] = {
    "toml_unknown_key": lambda t: _toml(t, 'env = "gymnax/CartPole-v1"\nwarp_drive = 9\n'),
    "toml_wrong_type": lambda t: _toml(t, 'env = "gymnax/CartPole-v1"\nnum-seeds = "many"\n'),
    "toml_not_toml": lambda t: _toml(t, "env = \n"),
    "toml_set_not_table": lambda t: _toml(t, 'env = "gymnax/CartPole-v1"\nset = 3\n'),
    "toml_bad_setting": lambda t: _toml(t, 'env = "gymnax/CartPole-v1"\n[set]\nlr = "fast"\n'),
    "stopped_run": lambda t: _stopped_run(t),
    "stopped_run_garbage_checkpoint": lambda t: _stopped_run(t, b"RLCKPT1\n" + b"\x07" * 30),
    "stopped_run_foreign_checkpoint": lambda t: _stopped_run(t, b"PK\x03\x04 a zip file"),
    "file": _file,
    "run": lambda t: _fake_run(t),
    "run_gymnax": lambda t: _fake_run(t, env="gymnax/CartPole-v1"),
    "run_no_params": lambda t: _fake_run(t, params="missing"),
    "run_params_truncated": lambda t: _fake_run(t, params="truncated"),
    "run_params_garbage": lambda t: _fake_run(t, params="garbage"),
    "run_params_empty": lambda t: _fake_run(t, params="empty"),
    "run_config_garbage": lambda t: _fake_run(t, record="{not json at all"),
    "run_config_truncated": lambda t: _fake_run(
        t, record=json.dumps(_good_record())[:40]),
    "run_config_list": lambda t: _fake_run(t, record="[1, 2, 3]"),
    "run_config_no_algo": lambda t: _fake_run(
        t, record={k: v for k, v in _good_record().items() if k != "algo"}),
    "run_config_unknown_algo": lambda t: _fake_run(t, record=_good_record(algo="ppp")),
    "run_config_unknown_field": lambda t: _fake_run(
        t, record=_good_record(config={**as_jsonable(PQN_CONFIG), "warp_drive": 9})),
    "run_config_bad_value": lambda t: _fake_run(
        t, record=_good_record(config={**as_jsonable(PQN_CONFIG), "hidden_size": "wide"})),
    "run_config_bad_seeds": lambda t: _fake_run(t, record=_good_record(seeds=5)),
    "run_config_unknown_env": lambda t: _fake_run(t, record=_good_record(env="pgx/chesss")),
    "run_config_env_kwargs": lambda t: _fake_run(
        t, record=_good_record(env_kwargs={"board": 3})),
}


# --------------------------------------------------------------------------- the table

CASES: dict[str, Case] = {
    # malformed ids
    "env with a typo": Case(["run", "--env", "gymnax/CartPol-v1"], "gymnax/CartPole-v1"),
    "env without backend": Case(["run", "--env", "CartPole-v1"], "gymnax/CartPole-v1"),
    "env unknown backend": Case(["run", "--env", "nosuch/Foo-v0"], "nosuch"),
    "env empty": Case(["run", "--env", ""], "unknown environment"),
    "env backend only": Case(["run", "--env", "gymnax/"], "gymnax/"),
    # a user's own environment, named by import path (hostile_envs.py beside this file)
    "env factory module missing": Case(["run", "--env", "no_such_lab.envs:make"],
                                       "no module named 'no_such_lab'"),
    "env factory name missing": Case(["run", "--env", "hostile_envs:make_maze"],
                                     "has no 'make_maze'"),
    "env factory not callable": Case(["run", "--env", "hostile_envs:NOT_CALLABLE"],
                                     "not a callable"),
    "env factory raises": Case(["run", "--env", "hostile_envs:raises"],
                               "the factory raised RuntimeError: maze.txt not found"),
    "env factory wrong type": Case(["run", "--env", "hostile_envs:wrong_type"],
                                   "returned a dict, which lacks reset"),
    "env factory breaks the port": Case(["run", "--env", "hostile_envs:int_reward"],
                                        "reward must be float32 [], got int32"),
    "env factory step crashes": Case(["run", "--env", "hostile_envs:step_crashes"],
                                     "its code raised TypeError"),
    "env factory unknown env-arg": Case(["run", "--env", "rl_example_maze.maze:Maze",
                                         "--env-arg", "size=3"], "does not take 'size'"),
    "env factory bad env-arg": Case(["run", "--env", "rl_example_maze.maze:Maze",
                                     "--env-arg", "layout=S#/G"], "rows of equal length"),
    "algo with a typo": Case(["run", *CART, "--algo", "ppp"], "'ppo'"),
    "algo empty": Case(["run", *CART, "--algo", ""], "algorithm"),
    "algo wrong action space": Case(["run", *CART, "--algo", "td3"], "td3"),
    # --set: keys, types, ranges, non-finite values
    "set unknown key": Case(["run", *CART, "--set", "learning_rate=1e-3"], "lr"),
    "set without =": Case(["run", *CART, "--set", "lr"], "key=value"),
    "set empty key": Case(["run", *CART, "--set", "=3"], "key=value"),
    "set float not a number": Case(["run", *CART, "--set", "lr=fast"], "float"),
    "set int not whole": Case(["run", *CART, "--set", "num_envs=2.5"], "int"),
    "set bool garbage": Case(["run", *CART, "--set", "anneal_lr=maybe"], "bool"),
    "set lr nan": Case(["run", *CART, "--set", "lr=nan"], "finite"),
    "set lr inf": Case(["run", *CART, "--set", "lr=inf"], "finite"),
    "set lr -inf": Case(["run", *CART, "--set", "lr=-inf"], "finite"),
    "set lr negative": Case(["run", *CART, "--set", "lr=-1e-3"], "lr"),
    "set lr zero": Case(["run", *CART, "--set", "lr=0"], "lr"),
    "set gamma above 1": Case(["run", *CART, "--set", "gamma=1.5"], "gamma"),
    "set gamma nan": Case(["run", *CART, "--set", "gamma=nan"], "finite"),
    "set num_envs zero": Case(["run", *CART, "--set", "num_envs=0"], "num_envs"),
    "set num_envs negative": Case(["run", *CART, "--set", "num_envs=-4"], "num_envs"),
    "set num_envs huge": Case(["run", *CART, "--set", "num_envs=1e30"], "num_envs"),
    "set minibatches not dividing": Case(["run", *CART, "--set", "num_minibatches=3"],
                                         "divide"),
    "set hidden_sizes garbage": Case(["run", *CART, "--set", "hidden_sizes=a,b"], "tuple"),
    # numbers on the command line
    "total-timesteps negative": Case(["run", *CART, "--total-timesteps", "-5"],
                                     "--total-timesteps"),
    "total-timesteps zero": Case(["run", *CART, "--total-timesteps", "0"], "--total-timesteps"),
    "total-timesteps fraction": Case(["run", *CART, "--total-timesteps", "1.5"], "whole number"),
    "total-timesteps nan": Case(["run", *CART, "--total-timesteps", "nan"], "--total-timesteps"),
    "total-timesteps inf": Case(["run", *CART, "--total-timesteps", "inf"], "--total-timesteps"),
    "total-timesteps below one update": Case(["run", *CART, "--total-timesteps", "10"],
                                             "total_timesteps"),
    "total-timesteps not a number": Case(["run", *CART, "--total-timesteps", "lots"],
                                         "--total-timesteps"),
    "total-timesteps beyond the counters": Case(["run", *CART, "--total-timesteps", "1e20"],
                                                "at most 2,147,483,647"),
    "num-seeds zero": Case(["run", *CART, "--num-seeds", "0"], "--num-seeds"),
    "num-seeds negative": Case(["run", *CART, "--num-seeds", "-3"], "--num-seeds"),
    "num-seeds not a number": Case(["run", *CART, "--num-seeds", "many"], "--num-seeds"),
    "num-seeds oversized": Case(["run", *CART, "--num-seeds", "1000000000"], "--num-seeds"),
    "log-every not dividing": Case(["run", *CART, "--log-every", "7"], "--log-every"),
    "log-every zero": Case(["run", *CART, "--log-every", "0"], "--log-every"),
    "devices zero": Case(["run", *CART, "--devices", "0"], "--devices"),
    "devices too many": Case(["run", *CART, "--devices", "4096"], "--devices"),
    "watchdog negative": Case(["run", *CART, "--watchdog-seconds", "-1"], "--watchdog-seconds"),
    "watchdog nan": Case(["run", *CART, "--watchdog-seconds", "nan"], "--watchdog-seconds"),
    "unknown option": Case(["run", *CART, "--num-seed", "2"], "--num-seed"),
    "missing --env": Case(["run"], "--env"),
    # --config FILE and --from RUN_DIR
    "config missing": Case(["run", "--config", "{tmp}/none.toml"], "cannot read it"),
    "config unknown key": Case(["run", "--config", "{tmp}/run.toml"], "unknown key 'warp_drive'",
                               "toml_unknown_key"),
    "config wrong type": Case(["run", "--config", "{tmp}/run.toml"], "num-seeds",
                              "toml_wrong_type"),
    "config not TOML": Case(["run", "--config", "{tmp}/run.toml"], "is not a TOML file",
                            "toml_not_toml"),
    "config set not a table": Case(["run", "--config", "{tmp}/run.toml"], "must be a table",
                                   "toml_set_not_table"),
    "config bad setting": Case(["run", "--config", "{tmp}/run.toml"], "lr", "toml_bad_setting"),
    "from missing run": Case(["run", "--from", "{tmp}/nothing"], "does not exist"),
    "from run without request": Case(["run", "--from", "{run}"], "records no request", "run"),
    "algos preset unknown": Case(["algos", "ppo", "--preset", "warp"], "unknown preset"),
    "algos preset without algo": Case(["algos", "--preset", "minatar"], "needs an algorithm"),
    # inconsistent settings
    "unknown preset": Case(["run", *CART, "--preset", "atari"], "preset"),
    "unknown env-arg": Case(["run", *CART, "--env-arg", "gravity_x=1"], "gravity_x"),
    "env-arg without =": Case(["run", *CART, "--env-arg", "gravity"], "key=value"),
    "env-arg not an integer": Case(["run", *CART, "--env-arg", "max_steps_in_episode=abc"],
                                   "max_steps_in_episode (default 500) must be an integer"),
    "env-arg negative length": Case(["run", *CART, "--env-arg", "max_steps_in_episode=-5"],
                                    "must be between 1 and 2,147,483,647"),
    "env-arg length too large": Case(["run", *CART, "--env-arg", "max_steps_in_episode=1e12"],
                                     "must be between 1 and 2,147,483,647"),
    "env-arg wrong kind (jumanji)": Case(["run", "--env", "jumanji/Snake-v1", "--env-arg",
                                          "num_rows=abc"], "does not accept 'num_rows'"),
    "env-arg not finite": Case(["run", *CART, "--env-arg", "gravity=nan"],
                               "gravity must be a finite number"),
    "data-parallel unsupported": Case(["run", "--env", "native/GridWorld", "--algo",
                                       "qlearning", "--data-parallel"], "data-parallel"),
    "meta-params for ppo": Case(["run", *CART, "--meta-params", "{tmp}/m.npz"], "--meta-params"),
    "lpo without meta-params": Case(["run", *CART, "--algo", "lpo"], "--meta-params"),
    "lpo meta-params missing file": Case(["run", *CART, "--algo", "lpo", "--meta-params",
                                          "{tmp}/missing.npz"], "missing.npz"),
    "distributed auto and coordinator": Case(["run", *CART, "--distributed-auto",
                                              "--coordinator", "h:1"], "--distributed-auto"),
    # where the run is written
    "logdir is a file": Case(["run", *CART, "--logdir", "{file}"], "is a file", "file"),
    "logdir parent is a file": Case(["run", *CART, "--logdir", "{file}/sub"], "is a file",
                                    "file"),
    "logdir not writable": Case(["run", *CART, "--logdir", "/proc/rl-logs"], "not writable"),
    "run-name escapes": Case(["run", *CART, "--run-name", "../../x"], "--run-name"),
    "run-name with slash": Case(["run", *CART, "--run-name", "a/b"], "path separator"),
    "run-name with backslash": Case(["run", *CART, "--run-name", "a\\b"], "path separator"),
    "run-name dot-dot": Case(["run", *CART, "--run-name", ".."], "'..'"),
    "run-name empty": Case(["run", *CART, "--run-name", ""], "empty"),
    "run-name blank": Case(["run", *CART, "--run-name", "   "], "empty"),
    "run-name control character": Case(["run", *CART, "--run-name", "a\nb"], "control"),
    "run-name line separator": Case(["run", *CART, "--run-name", "a\u2028b"], "line-break"),
    "run-name too long": Case(["run", *CART, "--run-name", "n" * 300], "bytes long"),
    # rl sweep
    "sweep run-name escapes": Case(["sweep", *CART, "--grid", "lr=1e-3,1e-4", "--run-name",
                                    "../x"], "--run-name"),
    "sweep logdir is a file": Case(["sweep", *CART, "--grid", "lr=1e-3,1e-4", "--logdir",
                                    "{file}"], "is a file", "file"),
    "sweep static field": Case(["sweep", *CART, "--grid", "num_envs=4,8"], "num_envs"),
    "sweep grid empty value": Case(["sweep", *CART, "--grid", "lr=1e-3,,2e-3"], "empty value"),
    "sweep unknown key": Case(["sweep", *CART, "--grid", "learning_rate=1,2"], "learning_rate"),
    "sweep grid not numbers": Case(["sweep", *CART, "--grid", "lr=a,b"], "not a number"),
    "sweep grid nan": Case(["sweep", *CART, "--grid", "lr=nan,1e-3"], "finite"),
    "sweep grid empty": Case(["sweep", *CART, "--grid", "lr="], "--grid"),
    "sweep grid out of range": Case(["sweep", *CART, "--grid", "gamma=0.9,2"], "gamma"),
    "sweep sample bad distribution": Case(["sweep", *CART, "--sample", "lr=normal:1e-4:1e-3"],
                                          "normal"),
    "sweep sample malformed": Case(["sweep", *CART, "--sample", "lr=uniform:1"], "--sample"),
    "sweep sample loguniform from 0": Case(["sweep", *CART, "--sample", "lr=loguniform:0:1"],
                                           "loguniform"),
    "sweep num-samples zero": Case(["sweep", *CART, "--sample", "lr=uniform:1e-4:1e-3",
                                    "--num-samples", "0"], "--num-samples"),
    "sweep num-seeds zero": Case(["sweep", *CART, "--grid", "lr=1e-3,1e-4", "--num-seeds",
                                  "0"], "--num-seeds"),
    "sweep oversized": Case(["sweep", *CART, "--grid", "lr=1e-3,1e-4", "--num-seeds",
                             "1000000000"], "members"),
    # rl evolve
    "evolve unknown meta": Case(["evolve", "--meta", "magic", *CART], "magic"),
    "evolve unknown strategy": Case(["evolve", *CART, "--strategy", "nelder_mead"],
                                    "nelder_mead"),
    "evolve population zero": Case(["evolve", *CART, "--population", "0"], "--population"),
    "evolve generations zero": Case(["evolve", *CART, "--generations", "0"], "--generations"),
    "evolve sigma nan": Case(["evolve", *CART, "--sigma", "nan"], "--sigma"),
    "evolve sigma negative": Case(["evolve", *CART, "--sigma", "-1"], "--sigma"),
    "evolve unknown env": Case(["evolve", "--env", "gymnax/CartPol-v1"], "gymnax/CartPole-v1"),
    "evolve run-name escapes": Case(["evolve", *CART, "--run-name", "../x"], "--run-name"),
    "evolve logdir is a file": Case(["evolve", *CART, "--logdir", "{file}"], "is a file",
                                    "file"),
    "evolve resume missing": Case(["evolve", "--resume", "{tmp}/nothing"], "nothing"),
    # rl eval: missing, corrupt or truncated run files
    "eval missing run dir": Case(["eval", "{tmp}/nothing"], "does not exist"),
    "eval run dir is a file": Case(["eval", "{file}"], "does not exist", "file"),
    "eval no params": Case(["eval", "{run}"], "has no params.eqx", "run_no_params"),
    "eval config garbage": Case(["eval", "{run}"], "config.json", "run_config_garbage"),
    "eval config truncated": Case(["eval", "{run}"], "config.json", "run_config_truncated"),
    "eval config a list": Case(["eval", "{run}"], "config.json", "run_config_list"),
    "eval config without algo": Case(["eval", "{run}"], "config.json", "run_config_no_algo"),
    "eval config unknown algo": Case(["eval", "{run}"], "ppp", "run_config_unknown_algo"),
    "eval config unknown field": Case(["eval", "{run}"], "warp_drive",
                                      "run_config_unknown_field"),
    "eval config bad value": Case(["eval", "{run}"], "does not fit", "run_config_bad_value"),
    "eval config bad seeds": Case(["eval", "{run}"], "seeds", "run_config_bad_seeds"),
    "eval config unknown env": Case(["eval", "{run}"], "pgx/chesss", "run_config_unknown_env"),
    "eval config bad env kwargs": Case(["eval", "{run}"], "board", "run_config_env_kwargs"),
    "eval params truncated": Case(["eval", "{run}"], "params.eqx", "run_params_truncated"),
    "eval params garbage": Case(["eval", "{run}"], "params.eqx", "run_params_garbage"),
    "eval params empty": Case(["eval", "{run}"], "params.eqx", "run_params_empty"),
    "eval games zero": Case(["eval", "{run}", "--games", "0"], "--episodes", "run"),
    "eval games oversized": Case(["eval", "{run}", "--games", "1000000000000"], "--episodes",
                                 "run"),
    "eval games not a number": Case(["eval", "{run}", "--games", "all"], "--games", "run"),
    "eval opponent off pgx": Case(["eval", "{run}", "--opponent", "random"],
                                  "--opponent is for two-player games", "run_gymnax"),
    "eval unknown opponent": Case(["eval", "{run}", "--opponent", "alphazero"], "alphazero",
                                  "run"),
    "eval search opponent, no simulations": Case(["eval", "{run}", "--opponent", "mcts:0"],
                                                 "'mcts:N' with N a positive", "run"),
    "eval search opponent, simulations not a number": Case(
        ["eval", "{run}", "--opponent", "mcts:abc"], "'mcts:N' with N a positive", "run"),
    "run search opponent, simulations not a number": Case(
        ["run", "--algo", "pqn", "--env", "pgx/tic_tac_toe", "--env-arg", "opponent=mcts:abc"],
        "'mcts:N' with N a positive"),
    "eval search opponent, game with chance": Case(
        ["eval", "{run}", "--env", "pgx/backgammon", "--opponent", "mcts:8"], "without chance",
        "run"),
    "run multi-agent env": Case(["run", "--algo", "ppo", "--env", "jaxmarl/MPE_simple_spread_v3"],
                                "train it with 'ippo'"),
    "shaping without a shaping reward": Case(
        ["run", "--algo", "ippo", "--env", "jaxmarl/MPE_simple_spread_v3", "--set",
         "reward_shaping_horizon=1000"], "reports no shaping reward"),
    "run multi-agent algo": Case(["run", "--algo", "ippo", "--env", "gymnax/CartPole-v1"],
                                 "ippo trains multi-agent environments"),
    "run planner off a board game": Case(["run", "--algo", "alphazero", "--env",
                                          "gymnax/CartPole-v1"], "plans with the game's rules"),
    "run self-play, algorithm without it": Case(["run", "--algo", "dqn", "--env",
                                                 "pgx/tic_tac_toe", "--env-arg", "opponent=self"],
                                                "does not learn in self-play"),
    # rl arena
    "arena search simulations zero": Case(["arena", "{run}", "--search-simulations", "0"],
                                          "--search-simulations must be", "run"),
    "arena search simulations, no planner": Case(["arena", "{run}", "--search-simulations",
                                                  "8"], "none of these runs plans", "run"),
    "run planner in self-play": Case(["run", "--algo", "alphazero", "--env", "pgx/tic_tac_toe",
                                      "--env-arg", "opponent=self"], "drop opponent=self"),
    "run reflect on a game without symmetry": Case(
        ["run", "--algo", "alphazero", "--env", "pgx/othello", "--set", "reflect=true"],
        "no left-right symmetry"),
    "arena odd games": Case(["arena", "{run}", "--games", "7"], "--games must be an even", "run"),
    "arena opening moves negative": Case(["arena", "{run}", "--opening-moves", "-1"],
                                         "--opening-moves must be", "run"),
    "run pool against a fixed opponent": Case(["run", "--algo", "ppo", "--env", "pgx/tic_tac_toe",
                                               "--set", "pool_size=4"],
                                              "needs a self-play environment"),
    "run pool, recurrent algorithm": Case(["run", "--algo", "ppo_rnn", "--env",
                                           "gymnax/CartPole-v1", "--set", "pool_size=4"],
                                          "no self-play snapshot pool"),
    "arena off pgx": Case(["arena", "{run}"], "has none", "run_gymnax"),
    "arena unknown player": Case(["arena", "{run}", "--opponents", "alphazero"],
                                 "a built-in player is one of", "run"),
    "arena one entrant": Case(["arena", "--env", "pgx/tic_tac_toe", "--opponents", "random"],
                              "two entrants or more"),
    "eval other spaces": Case(["eval", "{run}", "--env", "pgx/connect_four"], "other spaces",
                              "run"),
    # checkpoints and rl resume
    "run checkpoint-every off the chunks": Case(["run", *CART, "--checkpoint-every", "7"],
                                                "--checkpoint-every 7 must be"),
    "run eval-every negative": Case(["run", *CART, "--eval-every", "-4"], "--eval-every"),
    "run eval-every beyond the run": Case(["run", *CART, "--total-timesteps", "5120",
                                           "--log-every", "1", "--eval-every", "20"],
                                          "longer than the run"),
    "run checkpoint-minutes negative": Case(["run", *CART, "--checkpoint-minutes", "-1"],
                                            "--checkpoint-minutes"),
    "sweep checkpoint-every off the chunks": Case(
        ["sweep", *CART, "--grid", "lr=1e-3,3e-3", "--checkpoint-every", "7"],
        "--checkpoint-every 7 must be"),
    "resume missing run dir": Case(["resume", "{tmp}/nothing"], "does not exist"),
    "resume run dir is a file": Case(["resume", "{file}"], "is a file", "file"),
    "resume not a run": Case(["resume", "{run}"], "records no request", "run"),
    "resume before any checkpoint": Case(["resume", "{run}"], "has no checkpoint",
                                         "stopped_run"),
    "resume damaged checkpoint": Case(["resume", "{run}"], "no usable checkpoint",
                                      "stopped_run_garbage_checkpoint"),
    "resume foreign file": Case(["resume", "{run}"], "not a checkpoint file",
                                "stopped_run_foreign_checkpoint"),
    "resume total not whole": Case(["resume", "{run}", "--total-timesteps", "1.5"],
                                   "whole number", "stopped_run"),
    "resume total beyond the counters": Case(["resume", "{run}", "--total-timesteps", "1e20"],
                                             "at most 2,147,483,647", "stopped_run"),
    # rl render and rl plot
    "render missing run dir": Case(["render", "{tmp}/nothing"], "does not exist"),
    "render member out of range": Case(["render", "{run}", "--member", "5"],
                                       "--member 5 is out of range", "run"),
    "render wrong file type": Case(["render", "{run}", "--out", "{tmp}/x.gif"],
                                   "renders to a .svg file", "run"),
    "render max steps zero": Case(["render", "{run}", "--max-steps", "0"],
                                  "--max-steps must be >= 1", "run"),
    "render params truncated": Case(["render", "{run}"], "params.eqx", "run_params_truncated"),
    "plot missing run dir": Case(["plot", "{tmp}/nothing", "--out", "{tmp}/p.png"],
                                 "does not exist"),
    "plot run without metrics": Case(["plot", "{run}", "--out", "{tmp}/p.png"],
                                     "has no metrics.jsonl", "run"),
    "plot without --out": Case(["plot", "{run}"], "--out", "run"),
}


def _fill(argv: list[str], tmp: Path) -> list[str]:
    return [a.format(tmp=tmp, file=tmp / "file", run=tmp / "run", logdir=tmp / "logs")
            for a in argv]


def _tree(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size if p.is_file() else -1
            for p in sorted(path.rglob("*"))}



@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_and_writes_nothing(name: str, tmp_path: Path, capsys,
                                                      monkeypatch) -> None:
    case = CASES[name]
    if case.setup is not None:
        SETUPS[case.setup](tmp_path)
    monkeypatch.chdir(tmp_path)  # the default --logdir `runs` lands here, if anywhere
    before = _tree(tmp_path)
    argv = _fill(case.argv, tmp_path)
    if "--logdir" not in argv and argv[0] in ("run", "sweep", "evolve"):
        argv += ["--logdir", str(tmp_path / "logs")]
    code, out, err = run_cli(["--no-compile-cache", *argv], capsys)
    assert code == case.code, (code, out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rl: error:"), err
    assert case.hint in lines[0], (case.hint, lines[0])
    assert _tree(tmp_path) == before, "nothing may be written for bad input"
    assert not (REPO / "x").exists() and not os.path.exists("/tmp/x")


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 45
    assert {c.argv[0] for c in CASES.values()} >= {"run", "sweep", "evolve", "eval", "arena",
                                                   "resume", "render", "plot"}


# --------------------------------------------------------------------------- docs/errors.md

DOC_BEGIN = "<!-- generated from packages/rl-cli/tests/test_hostile_input.py: begin -->"
DOC_END = "<!-- generated: end -->"


def errors_table(messages: dict[str, str]) -> str:
    """The markdown table of docs/errors.md: each case, its command line and its message."""
    rows = ["| case | input | message (`rl: error: ...`) |", "|---|---|---|"]
    for name, case in CASES.items():
        argv = " ".join(_quote(a) for a in ["rl", *case.argv])
        msg = messages.get(name, "").removeprefix("rl: error: ")
        rows.append(f"| {name} | `{_cell(argv)}` | {_cell(msg)} |")
    return "\n".join(rows)


def _quote(a: str) -> str:
    a = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in a)
    return a if a and " " not in a else f"'{a}'"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def documented_messages() -> dict[str, str]:
    """The messages as docs/errors.md records them, by case name."""
    if not ERRORS_DOC.is_file():
        return {}
    text = ERRORS_DOC.read_text()
    body = text[text.find(DOC_BEGIN) + len(DOC_BEGIN):text.find(DOC_END)]
    out = {}
    for line in body.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) >= 3:
            out[cells[0]] = cells[2]
    return out


def test_errors_doc_lists_every_case() -> None:
    """docs/errors.md holds exactly the table's cases, in order, with their command lines; each
    documented message contains the case's hint. Regenerate with
    `uv run python packages/rl-cli/tests/test_hostile_input.py`."""
    documented = documented_messages()
    assert list(documented) == list(CASES), "docs/errors.md is out of date with the table"
    for name, case in CASES.items():
        assert _cell(case.hint) in documented[name], (name, documented[name])
    text = ERRORS_DOC.read_text()
    for name, case in CASES.items():
        assert _cell(" ".join(_quote(a) for a in ["rl", *case.argv])) in text, name



def _message(name: str, tmp: Path) -> str:
    """The one error line of a case, run in `tmp`, with `tmp` written as `$TMP`."""
    import contextlib
    import io

    case = CASES[name]
    if case.setup is not None:
        SETUPS[case.setup](tmp)
    argv = _fill(case.argv, tmp)
    if "--logdir" not in argv and argv[0] in ("run", "sweep", "evolve"):
        argv += ["--logdir", str(tmp / "logs")]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        with contextlib.suppress(SystemExit):
            main(["--no-compile-cache", *argv])
    return err.getvalue().strip().replace(str(tmp), "$TMP")


def write_errors_doc() -> None:
    """Regenerates the table in docs/errors.md from `CASES` (run this file as a script)."""
    import tempfile

    messages = {}
    cwd = os.getcwd()
    for name in CASES:
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            try:
                messages[name] = _message(name, Path(d).resolve())
            finally:
                os.chdir(cwd)
    text = ERRORS_DOC.read_text()
    head, tail = text[:text.find(DOC_BEGIN)], text[text.find(DOC_END) + len(DOC_END):]
    ERRORS_DOC.write_text(f"{head}{DOC_BEGIN}\n{errors_table(messages)}\n{DOC_END}{tail}")


if __name__ == "__main__":
    write_errors_doc()
