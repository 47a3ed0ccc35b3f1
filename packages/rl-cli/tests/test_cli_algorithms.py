"""The CLI runs every registered algorithm with no per-algorithm code: a tiny run of each on an
environment it supports writes a summary, and a mismatch (tabular on images, networks on a
tabular grid, Q-learning on continuous actions, TD3 on discrete ones) ends in one line with exit
code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

TINY = {
    "dpo": ("gymnax/CartPole-v1", ["--set", "num_steps=16", "--set", "num_minibatches=2",
                                   "--set", "num_epochs=1", "--total-timesteps", "128"]),
    "vpg": ("gymnax/CartPole-v1", ["--set", "num_steps=16", "--total-timesteps", "256"]),
    "pqn": ("gymnax/CartPole-v1", ["--set", "num_envs=4", "--set", "num_steps=16",
                                   "--set", "num_minibatches=2", "--set", "num_epochs=1",
                                   "--set", "hidden_size=16", "--total-timesteps", "128"]),
    "qlearning": ("native/GridWorld", ["--total-timesteps", "4000"]),
    "td3": ("gymnax/Pendulum-v1", ["--set", "num_envs=2", "--set", "batch_size=8",
                                   "--set", "buffer_size=64", "--set", "learning_starts=16",
                                   "--set", "hidden_sizes=8", "--total-timesteps", "400"]),
}



@pytest.mark.parametrize("algo", list(TINY))
def test_every_algorithm_runs_from_the_cli(algo: str, tmp_path: Path, capsys) -> None:
    env, extra = TINY[algo]
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", algo, "--env", env,
                            "--num-seeds", "2", "--logdir", str(tmp_path), "--run-name", "r",
                            "--no-progress", *extra], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["algo"] == algo and len(summary["final_return_per_member"]) == 2
    assert (tmp_path / "r" / "params.eqx").stat().st_size > 0


MISMATCHES = [
    (["--algo", "qlearning", "--env", "gymnax/Breakout-MinAtar"], "Discrete observations"),
    (["--algo", "ppo", "--env", "native/GridWorld"], "'qlearning'"),
    (["--algo", "pqn", "--env", "gymnax/Pendulum-v1"], "Discrete action"),
    (["--algo", "td3", "--env", "gymnax/CartPole-v1"], "td3 supports Box action"),
    (["--algo", "td3", "--env", "gymnax/Pendulum-v1", "--set", "gradient_steps=3"],
     "multiple of policy_delay"),
    (["--algo", "dpo", "--env", "gymnax/CartPole-v1", "--set", "beta=-1"], "beta"),
    (["--algo", "qlearning", "--env", "native/GridWorld", "--env-arg", "rows=0"], "rows"),
]


@pytest.mark.parametrize("argv,hint", MISMATCHES, ids=[a[1] + "-" + a[3] for a, _ in MISMATCHES])
def test_mismatch_is_one_line(argv, hint, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["--no-compile-cache", "run", *argv, "--logdir", str(tmp_path)],
                           capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:"), err
    assert hint in lines[0]
    assert not any(tmp_path.iterdir())
