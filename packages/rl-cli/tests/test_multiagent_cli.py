"""Multi-agent runs through the CLI as a user drives them: `rl run --algo ippo` on a JaxMARL task
trains every agent with one shared network and reports team returns (training and greedy
evaluation alike), `rl eval` plays whole episodes of every agent, MAPPO's decentralised actor
and PQN-VDN's agents act on the environment's own observations in `rl eval` and `rl render`; a
single-agent algorithm on a multi-agent environment (and the reverse) is one line
(test_hostile_input.py), and an interrupted IPPO run resumes bitwise (test_resume.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

pytest.importorskip("jaxmarl")

ENV = "jaxmarl/MPE_simple_spread_v3"


@pytest.fixture(scope="module")
def ippo_run(tmp_path_factory) -> Path:
    """Two IPPO members, 12 updates of 4 environments x 32 steps (3 agents each)."""
    from rl_cli.main import main

    logdir = tmp_path_factory.mktemp("ippo")
    with pytest.raises(SystemExit) as done:
        main(["--no-compile-cache", "run", "--algo", "ippo", "--env", ENV, "--num-seeds", "2",
              "--total-timesteps", str(12 * 128), "--set", "num_envs=4", "--set", "num_steps=32",
              "--eval-episodes", "8", "--logdir", str(logdir), "--run-name", "r",
              "--no-progress"])
        raise SystemExit(0)
    assert not done.value.code
    return logdir / "r"


def test_a_run_reports_team_returns(ippo_run: Path) -> None:
    """An MPE episode lasts 26 steps and every agent's reward is negative (distances and
    collisions): the team return, summed over the 3 agents, is the per-agent returns' sum."""
    summary = json.loads((ippo_run / "summary.json").read_text())
    greedy = np.array(summary["greedy_eval_return_per_member"])
    final = np.array(summary["final_return_per_member"])
    assert greedy.shape == final.shape == (2,)
    assert np.all(np.isfinite(greedy)) and np.all(greedy < 0) and np.all(final < 0)
    config = json.loads((ippo_run / "config.json").read_text())
    assert config["algo"] == "ippo" and config["config"]["num_envs"] == 4
    rows = [json.loads(line) for line in (ippo_run / "metrics.jsonl").read_text().splitlines()]
    assert rows and all(np.isfinite(r["episode_return"]).all() for r in rows if "episode_return"
                        in r)


def test_eval_plays_every_agent_to_the_end(ippo_run: Path, capsys) -> None:
    code, out, err = run_cli(["eval", str(ippo_run), "--episodes", "16"], capsys)
    assert code == 0, err
    assert "mean team return" in out
    res = json.loads((ippo_run / "eval-greedy.json").read_text())
    assert res["agents"] == 3 and res["episodes"] == 16 and res["unfinished"] == [0, 0]
    assert res["mean_length"] == [26.0, 26.0]  # every agent truncated together
    returns = np.array(res["returns"])
    assert returns.shape == (2, 16) and np.all(returns < 0)


def test_envs_lists_agent_counts(capsys) -> None:
    code, out, err = run_cli(["envs", "--backend", "jaxmarl"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "MPE_simple_spread_v3 mpe 3 agents, each Box(" in flat
    assert "MPE_simple_v3 mpe 1 agent, each Box(" in flat


def test_render_draws_every_agent_with_jaxmarls_visualiser(ippo_run: Path, capsys) -> None:
    """One greedy episode as a GIF of JaxMARL's MPE drawing: the first state and one frame per
    step of its 26, the return the team's."""
    from PIL import Image

    code, out, err = run_cli(["render", str(ippo_run)], capsys)
    assert code == 0, err
    path = ippo_run / "render-seed_0.gif"
    assert "over 26 steps (episode ended)" in " ".join(out.split())
    with Image.open(path) as gif:
        assert gif.n_frames == 27 and gif.size == (500, 500)


@pytest.mark.heavy
@pytest.mark.parametrize("algo", ["mappo", "pqn_vdn"])
def test_trains_evaluates_and_renders_on_the_envs_own_observations(algo: str, tmp_path: Path,
                                                                   capsys) -> None:
    """MAPPO's critic reads the global state in training, PQN-VDN learns the team's summed
    Q-values; `rl eval` and `rl render` step the environment itself, whose observations each
    agent acts on."""
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", algo, "--env", ENV,
                            "--total-timesteps", str(8 * 128), "--set", "num_envs=4", "--set",
                            "num_steps=32", "--eval-episodes", "4", "--logdir", str(tmp_path),
                            "--run-name", "m", "--no-progress"], capsys)
    assert code == 0, err
    run = tmp_path / "m"
    summary = json.loads((run / "summary.json").read_text())
    assert np.all(np.array(summary["greedy_eval_return_per_member"]) < 0)
    code, out, err = run_cli(["eval", str(run), "--episodes", "8"], capsys)
    assert code == 0, err
    res = json.loads((run / "eval-greedy.json").read_text())
    assert res["agents"] == 3 and res["unfinished"] == [0]
    code, out, err = run_cli(["render", str(run)], capsys)
    assert code == 0, err
    assert (run / "render-seed_0.gif").stat().st_size > 0


@pytest.mark.heavy
def test_smax_reports_its_win_rate_and_renders_with_its_own_renderer(tmp_path: Path,
                                                                    capsys) -> None:
    """Recurrent MAPPO on SMAX 3m against the heuristic enemy (its critic's GRU reads SMAX's
    world state): the win rate in metrics.jsonl (every chunk where a battle ended), in
    summary.json with its interval over the members, and in the final table; the greedy
    evaluation, `rl eval` (each member's win rate with its Wilson interval) and `rl render`
    (SMAX's renderer) run the recurrent actor alone on the environment's own observations."""
    from PIL import Image

    code, out, err = run_cli(["--no-compile-cache", "run", "--algo", "mappo_rnn", "--env",
                              "jaxmarl/SMAX_3m", "--num-seeds", "2", "--total-timesteps",
                              str(8 * 8 * 64), "--set", "num_envs=8", "--set", "num_steps=64",
                              "--set", "num_minibatches=2", "--eval-episodes", "2",
                              "--logdir", str(tmp_path), "--run-name", "s", "--no-progress"],
                             capsys)
    assert code == 0, err
    assert "final win rate" in out
    run = tmp_path / "s"
    summary = json.loads((run / "summary.json").read_text())
    rates = summary["final_win_rate_per_member"]
    assert len(rates) == 2 and all(0.0 <= r <= 1.0 for r in rates)
    assert summary["final_win_rate_mean"] == pytest.approx(np.mean(rates))
    assert np.all(np.isfinite(summary["greedy_eval_return_per_member"]))
    assert all(w in (0.0, 0.5, 1.0) for w in summary["greedy_eval_win_rate_per_member"])
    code, out, err = run_cli(["eval", str(run), "--episodes", "16"], capsys)
    assert code == 0, err
    assert "won (95% CI)" in " ".join(out.split())
    res = json.loads((run / "eval-greedy.json").read_text())
    assert res["unfinished"] == [0, 0] and len(res["win_rate"]) == 2
    for rate, (low, high) in zip(res["win_rate"], res["win_rate_ci95"], strict=True):
        assert 0.0 <= low <= rate <= high <= 1.0 and high - low > 0.1  # 16 battles: wide
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    ended = [r for r in rows if any(r["episodes"])]
    assert ended and all(0.0 <= r["win_rate"] <= 1.0 for r in ended)
    code, out, err = run_cli(["render", str(run)], capsys)
    assert code == 0, err
    with Image.open(run / "render-seed_0.gif") as gif:
        assert gif.n_frames >= 2 and gif.size == (400, 400)


@pytest.mark.heavy
def test_overcooked_renders_a_trained_run_with_jaxmarls_tiles(tmp_path: Path, capsys) -> None:
    """IPPO on Overcooked's cramped_room, briefly trained: `rl render` draws one greedy episode
    of both cooks with JaxMARL's `OvercookedVisualizer`, a frame for the first state and one per
    step of the episode's 400 (Overcooked ends only at its time limit)."""
    from PIL import Image

    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", "ippo", "--env",
                            "jaxmarl/Overcooked_cramped_room", "--total-timesteps",
                            str(4 * 4 * 32), "--set", "num_envs=4", "--set", "num_steps=32",
                            "--eval-episodes", "0", "--logdir", str(tmp_path), "--run-name", "o",
                            "--no-progress"], capsys)
    assert code == 0, err
    run = tmp_path / "o"
    code, out, err = run_cli(["render", str(run)], capsys)
    assert code == 0, err
    assert "over 400 steps (episode ended)" in " ".join(out.split())
    with Image.open(run / "render-seed_0.gif") as gif:
        # Pillow merges identical consecutive frames (a barely trained greedy cook stands
        # still), adding up their durations: 401 frames at the adapter's 4 a second.
        durations = []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
        assert sum(durations) == 401 * 250
        # cramped_room's 5 x 4 kitchen inside a border of one tile, JaxMARL's 32-pixel tiles
        assert gif.size == (7 * 32, 6 * 32)
