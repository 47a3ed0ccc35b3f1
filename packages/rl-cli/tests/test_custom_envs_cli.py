"""A user's own environment through every command: the example package (examples/maze, installed
in the workspace, registered as `mylab/Maze-v0` through its entry point) and a module of the
user's own in the current folder, named `module:factory`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import rl_process_env, run_cli
from PIL import Image

RL = shutil.which("rl") or str(Path(sys.executable).with_name("rl"))
# A user's module: gymnax's CartPole as a gymnax-interface (env, params) pair.
MY_ENVS = '''\
import gymnax


def cartpole(max_steps_in_episode=500):
    env, params = gymnax.make("CartPole-v1")
    return env, params.replace(max_steps_in_episode=max_steps_in_episode)
'''


def _train_maze(tmp_path: Path, capsys, steps: str) -> Path:
    code, out, err = run_cli(["--no-compile-cache", "run", "--algo", "ppo", "--env",
                              "mylab/Maze-v0", "--num-seeds", "2", "--total-timesteps", steps,
                              "--logdir", str(tmp_path), "--run-name", "maze", "--no-progress",
                              "--eval-episodes", "0"], capsys)
    assert code == 0, err
    run = tmp_path / "maze"
    assert json.loads((run / "config.json").read_text())["env"] == "mylab/Maze-v0"
    return run


def test_every_command_takes_a_run_of_the_example_maze(tmp_path: Path, capsys) -> None:
    """eval, render, resume and plot take a run on an installed package's environment as they
    take a built-in one (a short run: the agents need not be good)."""
    run = _train_maze(tmp_path, capsys, "4096")
    code, out, err = run_cli(["eval", str(run), "--episodes", "4"], capsys)
    assert code == 0, err
    result = json.loads((run / "eval-greedy.json").read_text())
    assert len(result["mean_return"]) == 2 and result["episodes"] == 4
    code, out, err = run_cli(["render", str(run), "--member", "1", "--max-steps", "20"], capsys)
    assert code == 0, err
    with Image.open(run / "render-seed_1.gif") as im:
        assert im.n_frames >= 2
    code, out, err = run_cli(["resume", str(run), "--total-timesteps", "6144",
                              "--no-progress"], capsys)
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from_update"] > 0 and summary["total_timesteps"] >= 6144
    code, out, err = run_cli(["plot", str(run), "--out", str(tmp_path / "maze.png")], capsys)
    assert code == 0, err
    assert (tmp_path / "maze.png").stat().st_size > 0


@pytest.mark.learning
def test_ppo_learns_the_example_mazes_shortest_path(tmp_path: Path, capsys) -> None:
    """PPO with its defaults learns the maze's shortest path (10 steps, return 1; a random legal
    walk reaches the goal in one episode of nine) in 2e5 steps, on both seeds, as `rl eval`
    measures it; the episode `rl render` draws is that path."""
    run = _train_maze(tmp_path, capsys, "200000")
    code, out, err = run_cli(["eval", str(run), "--episodes", "4"], capsys)
    assert code == 0, err
    result = json.loads((run / "eval-greedy.json").read_text())
    assert result["mean_return"] == [1.0, 1.0], result
    assert result["mean_length"] == [10.0, 10.0], result  # the shortest path
    code, out, err = run_cli(["render", str(run), "--member", "1"], capsys)
    assert code == 0, err
    with Image.open(run / "render-seed_1.gif") as im:
        assert im.n_frames == 11  # the start and ten moves


@pytest.mark.heavy
def test_a_module_in_the_current_folder_trains_as_the_built_in_id(tmp_path: Path, capsys,
                                                                    monkeypatch) -> None:
    """`rl run --env my_envs:cartpole`, run from the folder holding my_envs.py (through the
    installed `rl` command, as a user types it), ends with the very parameters of the same run
    on `gymnax/CartPole-v1`: the factory's (env, params) pair goes through the gymnax adapter's
    own code path. `rl eval` from that folder finds the module again through config.json."""
    (tmp_path / "my_envs.py").write_text(MY_ENVS)
    common = ["--algo", "ppo", "--preset", "classic_control", "--total-timesteps", "4096",
              "--env-arg", "max_steps_in_episode=200", "--logdir", str(tmp_path / "runs"),
              "--no-progress", "--eval-episodes", "0"]
    # The suite's compilation cache: the same program, compiled once for both runs.
    p = subprocess.run([RL, "run", "--env", "my_envs:cartpole", "--run-name", "mine", *common],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=rl_process_env())
    assert p.returncode == 0, p.stderr
    code, _, err = run_cli(["--no-compile-cache", "run", "--env", "gymnax/CartPole-v1",
                            "--run-name", "builtin", *common], capsys)
    assert code == 0, err
    mine, builtin = tmp_path / "runs" / "mine", tmp_path / "runs" / "builtin"
    assert json.loads((mine / "config.json").read_text())["env"] == "my_envs:cartpole"
    assert (mine / "params.eqx").read_bytes() == (builtin / "params.eqx").read_bytes()
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["eval", str(mine), "--episodes", "2"], capsys)
    assert code == 0, err
    assert "my_envs:cartpole" in out
